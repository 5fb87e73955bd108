import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CallToolResult,
  createMcpHandler,
  type McpHttpHandler,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';

/**
 * A real MCP server of the 2026-07-28 revision for the browser tests, built with the official
 * SDK's 2.x server (`createMcpHandler`, modern only: a 2025 client's `initialize` is refused).
 * Tests keep apart by a tenant (`/mcp?t=<tenant>`), each with its own handler, added tools and
 * log of what the server received, read at `GET /control/<tenant>/log`: every request's method,
 * its `Mcp-Session-Id`, `MCP-Protocol-Version` and `Mcp-Method` headers and the protocol
 * version of its `_meta` envelope, the calls, the cancellations and the closed
 * `subscriptions/listen` streams. `POST /control/<tenant>/drop-listens` cuts the open listen
 * streams. `POST
 * /control/<tenant>/add-tool` adds a tool and tells the tenant's `subscriptions/listen`
 * streams. Hostile answers to `server/discover`: `&discover=garbage` (a result of the wrong
 * shape), `&discover=future` (it offers only a revision no client knows). The tenant `secret`
 * takes only requests with `Authorization: Bearer modern-secret` (the proxy's credentials).
 */
export interface McpModernServer {
  readonly url: string;
  close(): Promise<void>;
}

/** One request as the server received it. */
export interface ReceivedRequest {
  readonly kind: 'request';
  readonly httpMethod: string;
  readonly method: string | null;
  readonly sessionHeader: string | null;
  readonly versionHeader: string | null;
  readonly methodHeader: string | null;
  readonly envelopeVersion: string | null;
}

export type ModernLogEntry =
  | ReceivedRequest
  | { readonly kind: 'call'; readonly name: string; readonly arguments: unknown }
  | { readonly kind: 'cancelled'; readonly tag: string }
  /** A `subscriptions/listen` stream the client closed (or that ended). */
  | { readonly kind: 'listen-closed' };

const TOOLS: Tool[] = [
  {
    name: 'echo',
    description: 'Echoes its text.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 200 } },
      required: ['text'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'add',
    description: 'Adds two numbers; the sum comes as structured content.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'slow',
    description: 'Waits the given milliseconds, or until cancelled.',
    inputSchema: {
      type: 'object',
      properties: { ms: { type: 'integer', minimum: 0 }, tag: { type: 'string' } },
      required: ['ms'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'delete_everything',
    description: 'A tool the proxy does not allow.',
    inputSchema: { type: 'object', properties: {} },
  },
];

interface Tenant {
  readonly added: Tool[];
  readonly log: ModernLogEntry[];
  readonly handler: McpHttpHandler;
  /** The open `subscriptions/listen` responses, which `drop-listens` cuts. */
  readonly listens: Set<ServerResponse>;
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers':
    'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name',
  'access-control-max-age': '600',
};

export async function startMcpModernServer(): Promise<McpModernServer> {
  const tenants = new Map<string, Tenant>();
  const tenantOf = (name: string): Tenant => {
    let tenant = tenants.get(name);
    if (!tenant) {
      const added: Tool[] = [];
      const log: ModernLogEntry[] = [];
      const handler = createMcpHandler(() => modernServer(added, log), {
        legacy: 'reject',
        keepAliveMs: 0,
      });
      tenant = { added, log, handler, listens: new Set() };
      tenants.set(name, tenant);
    }
    return tenant;
  };

  const http: HttpServer = createServer(async (req, res) => {
    for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    try {
      const control = /^\/control\/([\w-]+)\/(log|add-tool|drop-listens)$/.exec(url.pathname);
      if (control) {
        const tenant = tenantOf(control[1] ?? '');
        if (control[2] === 'drop-listens') {
          // As a restart or a broken connection would: the streams end without an answer.
          for (const listen of tenant.listens) listen.destroy();
          res.writeHead(204).end();
          return;
        }
        if (control[2] === 'log') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(tenant.log));
          return;
        }
        const { name } = JSON.parse(await readBody(req)) as { name: string };
        tenant.added.push({
          name,
          description: `Added while listening: ${name}.`,
          inputSchema: { type: 'object', properties: {} },
          annotations: { readOnlyHint: true },
        });
        tenant.handler.notify.toolsChanged();
        res.writeHead(204).end();
        return;
      }
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const tenantName = url.searchParams.get('t') ?? 'default';
      const tenant = tenantOf(tenantName);
      const text = req.method === 'POST' ? await readBody(req) : '';
      const body = parseJson(text);
      tenant.log.push(received(req, body));
      if (tenantName === 'secret' && req.headers.authorization !== 'Bearer modern-secret') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'missing credentials' }));
        return;
      }
      const discover = url.searchParams.get('discover');
      if (discover !== null && isRecord(body) && body.method === 'server/discover') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: hostileDiscover(discover) }));
        return;
      }
      // The response's close before its end is the client closing the stream: the revision's cancellation.
      const closed = new AbortController();
      const isListen = isRecord(body) && body.method === 'subscriptions/listen';
      if (isListen) tenant.listens.add(res);
      res.on('close', () => {
        if (!res.writableFinished) closed.abort();
        if (isListen) {
          tenant.listens.delete(res);
          tenant.log.push({ kind: 'listen-closed' });
        }
      });
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers.set(name, value);
      }
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(req.method === 'POST' ? { body: text } : {}),
        signal: closed.signal,
      });
      const response = await tenant.handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      const reader = response.body?.getReader();
      for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
        res.write(read.value);
      }
      res.end();
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await Promise.all([...tenants.values()].map((tenant) => tenant.handler.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A fresh server for one request (the revision has no session to keep one for). */
function modernServer(added: Tool[], log: ModernLogEntry[]): Server {
  const server = new Server(
    { name: 'airlock-modern-test-mcp', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.setRequestHandler('tools/list', async () => ({ tools: [...TOOLS, ...added] }));
  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    log.push({ kind: 'call', name: request.params.name, arguments: args });
    switch (request.params.name) {
      case 'echo':
        return { content: [{ type: 'text', text: `echo: ${String(args.text)}` }] };
      case 'add': {
        const sum = Number(args.a) + Number(args.b);
        return {
          content: [{ type: 'text', text: JSON.stringify({ sum }) }],
          structuredContent: { sum },
        };
      }
      case 'slow': {
        const finished = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), Number(args.ms));
          ctx.mcpReq.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve(false);
          });
        });
        if (!finished) log.push({ kind: 'cancelled', tag: String(args.tag ?? '') });
        return { content: [{ type: 'text', text: `slept ${String(args.ms)} ms` }] };
      }
      default: {
        const tool = added.find((candidate) => candidate.name === request.params.name);
        return {
          content: [{ type: 'text', text: tool ? `${tool.name} ran` : 'no such tool' }],
          isError: tool === undefined,
        };
      }
    }
  });
  return server;
}

/** A `server/discover` result of the wrong shape, or one offering only an unknown revision. */
function hostileDiscover(kind: string): unknown {
  if (kind === 'future') {
    return {
      resultType: 'complete',
      supportedVersions: ['2099-01-01'],
      capabilities: { tools: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'future', version: '9' } },
    };
  }
  return { supportedVersions: 'all of them', capabilities: ['tools'] };
}

function received(req: IncomingMessage, body: unknown): ReceivedRequest {
  const params = isRecord(body) && isRecord(body.params) ? body.params : undefined;
  const meta = params && isRecord(params._meta) ? params._meta : undefined;
  const envelope = meta?.['io.modelcontextprotocol/protocolVersion'];
  return {
    kind: 'request',
    httpMethod: req.method ?? '',
    method: isRecord(body) && typeof body.method === 'string' ? body.method : null,
    sessionHeader: header(req, 'mcp-session-id'),
    versionHeader: header(req, 'mcp-protocol-version'),
    methodHeader: header(req, 'mcp-method'),
    envelopeVersion: typeof envelope === 'string' ? envelope : null,
  };
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return typeof value === 'string' ? value : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
