import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * A real MCP server for the browser tests, built with the official SDK (Streamable HTTP,
 * sessions, an event store so a dropped stream can be resumed). Tests keep apart by a
 * tenant (`/mcp?t=<tenant>`): each has its own added tools and its own log of what the
 * server saw (cancellations, calls, the Authorization header), read at
 * `GET /control/<tenant>/log`. `POST /control/<tenant>/add-tool` adds a tool and tells
 * the tenant's sessions the list changed. `&tools=hostile` or `&tools=flood` serves a hostile
 * server's tools instead of the usual ones, `&tools=leaky` a careless server's (it quotes the
 * credentials it was sent, or answers with as many bytes as asked). `&response=json` answers
 * POSTs with JSON instead of an event stream.
 */
export interface McpTestServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Tools every tenant has; `tools/list` pages them three at a time. */
const TOOLS: Tool[] = [
  {
    name: 'echo',
    description: 'Echoes its text.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 200 } },
      required: ['text'],
      additionalProperties: false,
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
    outputSchema: {
      type: 'object',
      properties: { sum: { type: 'number' } },
      required: ['sum'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'picture',
    description: 'Returns a tiny PNG and a caption.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'readme',
    description: 'Returns an embedded text resource.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'fail',
    description: 'Always reports an error.',
    inputSchema: { type: 'object', properties: {} },
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
    name: 'write_note',
    description: 'Stores a note (not read-only).',
    inputSchema: {
      type: 'object',
      properties: { title: { type: 'string' } },
      required: ['title'],
    },
    annotations: { readOnlyHint: false },
  },
  {
    name: 'flaky_stream',
    description: 'Closes its response stream mid-call, then answers on the resumed stream.',
    inputSchema: { type: 'object', properties: { tag: { type: 'string' } } },
    annotations: { readOnlyHint: true },
  },
];

const PAGE_SIZE = 3;

/** Nested `allOf`s whose every branch refers to the next level twice: 2^depth checks of a valid value. */
function doublingSchema(depth: number): Tool['inputSchema'] {
  const $defs: Record<string, object> = { [`level${depth}`]: { type: 'number' } };
  for (let level = 0; level < depth; level++) {
    const next = { $ref: `#/$defs/level${level + 1}` };
    $defs[`level${level}`] = { allOf: [next, next] };
  }
  return { type: 'object', $defs, properties: { n: { $ref: '#/$defs/level0' } }, required: ['n'] };
}

/**
 * The tools of a hostile server (`/mcp?t=<tenant>&tools=hostile`): schemas whose check
 * would take hours (a catastrophic-backtracking pattern, doubling `allOf`s, a format whose
 * own regular expression backtracks on the server's structured content) or that a
 * linear-time engine cannot express (a lookahead), beside a harmless tool.
 */
const HOSTILE_TOOLS: Tool[] = [
  TOOLS[0] as Tool,
  {
    name: 'match_name',
    description: "Takes a name of a's only.",
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', pattern: '^(a+)+$' } },
      required: ['name'],
    },
  },
  { name: 'nested_checks', description: 'Takes a number.', inputSchema: doublingSchema(40) },
  {
    name: 'not_admin',
    description: 'Takes any user name but admin.',
    inputSchema: {
      type: 'object',
      properties: { user: { type: 'string', pattern: '^(?!admin$).*$' } },
    },
  },
  {
    name: 'link',
    description: 'Returns a link as structured content.',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: {
      type: 'object',
      properties: { url: { type: 'string', format: 'url' } },
      required: ['url'],
    },
  },
];

/** The tools of a careless server (`tools=leaky`): they quote the Authorization header they got. */
const LEAKY_TOOLS: Tool[] = [
  {
    name: 'whoami',
    description: 'Says which credentials reached the server.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'whoami_error',
    description: 'Fails with a JSON-RPC error quoting the credentials.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'bulk',
    description: 'Answers with a text of the given number of bytes.',
    inputSchema: {
      type: 'object',
      properties: { bytes: { type: 'integer', minimum: 0 } },
      required: ['bytes'],
    },
  },
];

/** How many tools a flooding server (`tools=flood`) lists, in one page. */
const FLOOD_TOOLS = 10_000;

function floodTools(): Tool[] {
  return Array.from({ length: FLOOD_TOOLS }, (_, index) => ({
    name: `tool_${index}`,
    description: `Tool number ${index} of a server that lists far too many. ${'Padding. '.repeat(20)}`,
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 8 }, (_, field) => [
          `field_${field}`,
          { type: 'string', description: `Field ${field} of tool ${index}.` },
        ]),
      ),
    },
  }));
}

/** The tools a tenant's server lists, by the `tools` query parameter. */
type ToolSet = 'default' | 'hostile' | 'flood' | 'leaky';

/** A 1×1 transparent PNG. */
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

interface Tenant {
  readonly added: Tool[];
  readonly log: string[];
  readonly servers: Set<Server>;
  readonly sessions: Set<string>;
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers':
    'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id',
  'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version',
  'access-control-max-age': '600',
};

export async function startMcpTestServer(): Promise<McpTestServer> {
  const tenants = new Map<string, Tenant>();
  const tenantOf = (name: string): Tenant => {
    let tenant = tenants.get(name);
    if (!tenant) {
      tenant = { added: [], log: [], servers: new Set(), sessions: new Set() };
      tenants.set(name, tenant);
    }
    return tenant;
  };
  const transports = new Map<string, StreamableHTTPServerTransport>();

  const http: HttpServer = createServer(async (req, res) => {
    for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    try {
      const control = /^\/control\/([\w-]+)\/(log|add-tool|forget-sessions)$/.exec(url.pathname);
      if (control) {
        const tenant = tenantOf(control[1] ?? '');
        if (control[2] === 'forget-sessions') {
          // As a restarted server would: the sessions' ids are no longer known.
          for (const id of tenant.sessions) transports.delete(id);
          tenant.sessions.clear();
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
          description: `Added while connected: ${name}.`,
          inputSchema: { type: 'object', properties: {} },
          annotations: { readOnlyHint: true },
        });
        await Promise.all([...tenant.servers].map((server) => server.sendToolListChanged()));
        res.writeHead(204).end();
        return;
      }
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const tenantName = url.searchParams.get('t') ?? 'default';
      const tenant = tenantOf(tenantName);
      if (tenantName === 'secret' && req.headers.authorization !== 'Bearer upstream-secret') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'missing credentials' }));
        return;
      }
      const sessionId = req.headers['mcp-session-id'];
      const existing = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (existing) {
        await existing.handleRequest(
          req,
          res,
          req.method === 'POST' ? await readJson(req) : undefined,
        );
        return;
      }
      if (typeof sessionId === 'string') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found' },
            id: null,
          }),
        );
        return;
      }
      const toolSet = url.searchParams.get('tools');
      const server = mcpServerFor(
        tenant,
        toolSet === 'hostile' || toolSet === 'flood' || toolSet === 'leaky' ? toolSet : 'default',
      );
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: url.searchParams.get('response') === 'json',
        eventStore: new InMemoryEventStore(),
        retryInterval: 50,
        onsessioninitialized: (id) => {
          transports.set(id, transport);
          tenant.sessions.add(id);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
        tenant.servers.delete(server);
        tenant.log.push('session-closed');
      };
      tenant.servers.add(server);
      await server.connect(transport);
      await transport.handleRequest(
        req,
        res,
        req.method === 'POST' ? await readJson(req) : undefined,
      );
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
      await Promise.all([...transports.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function mcpServerFor(tenant: Tenant, toolSet: ToolSet): Server {
  const server = new Server(
    { name: 'airlock-test-mcp', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    if (toolSet === 'hostile') return { tools: HOSTILE_TOOLS };
    if (toolSet === 'flood') return { tools: floodTools() };
    if (toolSet === 'leaky') return { tools: LEAKY_TOOLS };
    const all = [...TOOLS, ...tenant.added];
    const start = Number(request.params?.cursor ?? 0);
    const page = all.slice(start, start + PAGE_SIZE);
    const next = start + PAGE_SIZE;
    return next < all.length ? { tools: page, nextCursor: String(next) } : { tools: page };
  });
  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      tenant.log.push(`call:${request.params.name}:${JSON.stringify(args)}`);
      if (extra.authInfo === undefined && extra.requestInfo?.headers.authorization) {
        tenant.log.push(`authorization:${String(extra.requestInfo.headers.authorization)}`);
      }
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
        case 'picture':
          return {
            content: [
              { type: 'text', text: 'A transparent pixel.' },
              { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
            ],
          };
        case 'readme':
          return {
            content: [
              {
                type: 'resource',
                resource: { uri: 'notes://readme', mimeType: 'text/plain', text: 'Read me first.' },
              },
            ],
          };
        case 'fail':
          return {
            content: [{ type: 'text', text: 'The tool failed on purpose.' }],
            isError: true,
          };
        case 'slow': {
          const tag = String(args.tag ?? '');
          const finished = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), Number(args.ms));
            extra.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              resolve(false);
            });
          });
          if (!finished) tenant.log.push(`cancelled:slow:${tag}`);
          return { content: [{ type: 'text', text: `slept ${String(args.ms)} ms` }] };
        }
        case 'match_name':
        case 'nested_checks':
        case 'not_admin':
          return { content: [{ type: 'text', text: `${request.params.name} ran` }] };
        case 'link': {
          // Backtracks for hours in a regular expression that retries every split of the a's.
          const url = `http://${'a'.repeat(40)}!`;
          return { content: [{ type: 'text', text: url }], structuredContent: { url } };
        }
        case 'whoami':
          return {
            content: [
              {
                type: 'text',
                text: `You are ${String(extra.requestInfo?.headers.authorization)}.`,
              },
            ],
          };
        case 'whoami_error':
          throw new Error(
            `Refused: ${String(extra.requestInfo?.headers.authorization)} may not do that.`,
          );
        case 'bulk':
          return { content: [{ type: 'text', text: 'x'.repeat(Number(args.bytes)) }] };
        case 'write_note':
          return { content: [{ type: 'text', text: `saved "${String(args.title)}"` }] };
        case 'flaky_stream': {
          // The stream has its priming event id; closing it makes the client resume with Last-Event-ID.
          await delay(50);
          extra.closeSSEStream?.();
          tenant.log.push(`stream-closed:${String(args.tag ?? '')}`);
          await delay(300);
          return { content: [{ type: 'text', text: 'answered after the stream was resumed' }] };
        }
        default: {
          const added = tenant.added.find((tool) => tool.name === request.params.name);
          if (added) return { content: [{ type: 'text', text: `${added.name} ran` }] };
          return {
            content: [{ type: 'text', text: `No tool ${request.params.name}` }],
            isError: true,
          };
        }
      }
    },
  );
  return server;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}
