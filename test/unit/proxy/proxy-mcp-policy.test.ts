import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProxyHandler, type McpUpstream } from '../../../src/proxy';
import { type McpTestServer, startMcpTestServer } from '../../setup/mcp-test-server';
import {
  type ProxyServer,
  sentinelKey,
  testProxyOptions,
  useProxyFixture,
  waitFor,
} from './support';

const KEY = sentinelKey();
const fixture = useProxyFixture(KEY);

/** A GitHub-style token the MCP server is given by the proxy, and which must never come back. */
const TOKEN = `ghp_${randomBytes(18).toString('hex')}`;

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'proxy-policy-test', version: '1.0.0' },
  },
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

let mcp: McpTestServer;
beforeAll(async () => {
  mcp = await startMcpTestServer();
});
afterAll(() => mcp.close());

/** A tenant of its own on the MCP test server, so its log holds this test's calls only. */
function tenantUrl(query = ''): { url: string; log: () => Promise<string[]> } {
  const tenant = `policy-${randomBytes(6).toString('hex')}`;
  return {
    url: `${mcp.url}/mcp?t=${tenant}${query}`,
    log: async () => (await fetch(`${mcp.url}/control/${tenant}/log`)).json() as Promise<string[]>,
  };
}

function post(
  server: ProxyServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}/mcp/notes`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Initialises a session through the proxy; the headers later requests of it carry. */
async function openSession(server: ProxyServer): Promise<Record<string, string>> {
  const initialized = await post(server, INITIALIZE);
  expect(initialized.status).toBe(200);
  const sessionId = initialized.headers.get('mcp-session-id') ?? '';
  await initialized.text();
  const headers = { 'mcp-session-id': sessionId };
  const notified = await post(
    server,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    headers,
  );
  expect(notified.status).toBe(202);
  await notified.text();
  return headers;
}

function callTool(id: number, name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

async function errorCodeOf(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

/** A plain HTTP upstream recording what reached it; it answers every POST with a JSON-RPC result. */
async function startRecorder() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, received };
}

function serveNotes(upstream: McpUpstream, options: Record<string, unknown> = {}) {
  return fixture.serveProxy({
    upstream: 'http://127.0.0.1:1/v1',
    mcp: { notes: upstream },
    ...options,
  });
}

describe('the MCP route holds every message to the server policy', () => {
  it('refuses a tools/call of a tool the app did not configure (delete_repository); the server never sees it', async () => {
    const tenant = tenantUrl();
    const server = await serveNotes({ url: tenant.url, allowedTools: ['echo'] });
    const session = await openSession(server);

    const deleted = await post(server, callTool(2, 'delete_repository', { repo: 'x' }), session);
    expect(deleted.status).toBe(403);
    expect(await errorCodeOf(deleted)).toBe('mcp_tool_not_allowed');
    const echoed = await post(server, callTool(3, 'echo', { text: 'hi' }), session);
    expect(echoed.status).toBe(200);
    expect(await echoed.text()).toContain('echo: hi');

    const log = await tenant.log();
    expect(log).toContain('call:echo:{"text":"hi"}');
    expect(log.some((line) => line.includes('delete_repository'))).toBe(false);
  });

  it('lists only the allowed tools, page by page, from an event stream and from JSON', async () => {
    for (const query of ['', '&response=json']) {
      const tenant = tenantUrl(query);
      const server = await serveNotes({ url: tenant.url, allowedTools: ['echo', 'slow'] });
      const session = await openSession(server);
      const names: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const listed = await post(
          server,
          { jsonrpc: '2.0', id: 2 + page, method: 'tools/list', params: cursor ? { cursor } : {} },
          session,
        );
        expect(listed.status).toBe(200);
        const text = await listed.text();
        const json = query === '' ? (/^data: (\{.*)$/m.exec(text)?.[1] ?? '') : text;
        const { result } = JSON.parse(json) as {
          result: { tools: { name: string }[]; nextCursor?: string };
        };
        names.push(...result.tools.map((tool) => tool.name));
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      // The server lists eight tools, three a page; its cursors still page through them all.
      expect(names).toEqual(['echo', 'slow']);
    }
  });

  it('filters a tool list replayed on a resumed GET stream too', async () => {
    const upstream = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const list = { tools: [{ name: 'echo' }, { name: 'delete_repository' }] };
      res.end(
        `id: 7\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 4, result: list })}\n\n`,
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
    const { port } = upstream.address() as AddressInfo;
    const server = await serveNotes({
      url: `http://127.0.0.1:${port}/mcp`,
      allowedTools: ['echo'],
    });
    const resumed = await fetch(`${server.url}/mcp/notes`, {
      headers: { accept: 'text/event-stream', 'last-event-id': '6' },
    });
    const text = await resumed.text();
    expect(text).toContain('id: 7\nevent: message\n');
    expect(text).toContain('"name":"echo"');
    expect(text).not.toContain('delete_repository');
  });

  it('lists no tools and refuses every tools/call when the upstream names no allowedTools', async () => {
    const tenant = tenantUrl();
    const server = await serveNotes({ url: tenant.url });
    const session = await openSession(server);
    const listed = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain('"tools":[]');
    const called = await post(server, callTool(3, 'echo', { text: 'hi' }), session);
    expect(called.status).toBe(403);
    expect(await errorCodeOf(called)).toBe('mcp_tool_not_allowed');
    expect((await tenant.log()).filter((line) => line.startsWith('call:'))).toEqual([]);
  });

  it('refuses a batch of 50 calls whole, and forwards none of them', async () => {
    const tenant = tenantUrl();
    const server = await serveNotes({ url: tenant.url, allowedTools: ['echo'] });
    const session = await openSession(server);
    const batch = Array.from({ length: 50 }, (_, index) =>
      callTool(10 + index, 'echo', { text: `n${index}` }),
    );
    const response = await post(server, batch, session);
    expect(response.status).toBe(400);
    expect(await errorCodeOf(response)).toBe('mcp_batch_not_allowed');
    // An empty batch and a batch of one are batches too.
    for (const body of [[], [callTool(2, 'echo', { text: 'one' })]]) {
      expect((await post(server, body, session)).status).toBe(400);
    }
    expect((await tenant.log()).filter((line) => line.startsWith('call:'))).toEqual([]);
  });

  it('refuses methods outside the default list unless allowedMethods names them', async () => {
    const recorder = await startRecorder();
    const strict = await serveNotes({ url: recorder.url, allowedTools: ['echo'] });
    for (const method of [
      'resources/read',
      'sampling/createMessage',
      'logging/setLevel',
      'tools/list/',
    ]) {
      const response = await post(strict, { jsonrpc: '2.0', id: 5, method, params: {} });
      expect(response.status, method).toBe(403);
      expect(await errorCodeOf(response)).toBe('mcp_method_not_allowed');
    }
    expect(recorder.received).toEqual([]);
    const wider = await serveNotes({ url: recorder.url, allowedMethods: ['resources/read'] });
    const read = await post(wider, { jsonrpc: '2.0', id: 6, method: 'resources/read', params: {} });
    expect(read.status).toBe(200);
    expect(recorder.received).toHaveLength(1);
  });

  it('refuses forged and malformed messages with a typed 400 and forwards nothing', async () => {
    const recorder = await startRecorder();
    const server = await serveNotes({ url: recorder.url, allowedTools: ['echo'] });
    const hostile: unknown[] = [
      'null',
      '"tools/call"',
      { method: 'ping', id: 1 }, // no jsonrpc
      { jsonrpc: '1.0', method: 'ping', id: 1 },
      { jsonrpc: '2.0', method: 7, id: 1 },
      { jsonrpc: '2.0', method: 'ping', id: { forged: true } },
      { jsonrpc: '2.0', method: 'ping', id: 1.5 },
      { jsonrpc: '2.0', id: 1 }, // neither a request nor a response
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: ['echo'] } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'echo' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call' },
    ];
    for (const body of hostile) {
      const response = await post(server, body);
      expect(response.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(response.status, JSON.stringify(body)).toBeLessThan(500);
      expect(['invalid_json', 'mcp_tool_not_allowed']).toContain(await errorCodeOf(response));
    }
    // A huge tool name is refused without being quoted back whole.
    const huge = await post(server, callTool(1, `${'a'.repeat(100_000)}"<script>`));
    expect(huge.status).toBe(403);
    const message = ((await huge.json()) as { error: { message: string } }).error.message;
    expect(message.length).toBeLessThan(200);
    expect(message).not.toContain('<script>');
    expect(recorder.received).toEqual([]);
    // A response to the server's own ping passes: the client must be able to answer it.
    const pong = await post(server, { jsonrpc: '2.0', id: 'srv-1', result: {} });
    expect(pong.status).toBe(200);
    expect(recorder.received).toHaveLength(1);
  });
});

describe('the MCP route counts requests against the user', () => {
  it('forwards 5 of 30 requests past a limit of 5 a minute, and answers the rest 429 rate_limited', async () => {
    const tenant = tenantUrl();
    let now = Date.UTC(2026, 0, 1, 12, 0, 10);
    const server = await serveNotes(
      { url: tenant.url, allowedTools: ['echo'] },
      {
        authorize: (request: Request) => ({ userId: request.headers.get('x-user') ?? 'nobody' }),
        limits: { requestsPerMinute: 5 },
        now: () => now,
      },
    );
    const user = { 'x-user': 'alice' };
    // Two requests as "nobody"; alice's count starts after them.
    const session = await openSession(server);
    const headers = { ...user, ...session };
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        post(server, callTool(100 + index, 'echo', { text: `c${index}` }), headers),
      ),
    );
    const statuses = answers.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
    const refused = answers.find((response) => response.status === 429);
    // The sliding window lets the next request in just after the minute's end: 50 s and 1 ms.
    expect(refused?.headers.get('retry-after')).toBe('51');
    expect(await errorCodeOf(refused as Response)).toBe('rate_limited');
    await Promise.all(
      answers.filter((response) => !response.bodyUsed).map((response) => response.text()),
    );
    expect((await tenant.log()).filter((line) => line.startsWith('call:'))).toHaveLength(5);

    // Another user has a count of their own; the next minute starts alice's again.
    expect(
      (
        await post(
          server,
          { jsonrpc: '2.0', id: 9, method: 'ping' },
          { 'x-user': 'bob', ...session },
        )
      ).status,
    ).toBe(200);
    now += 60_000;
    expect((await post(server, { jsonrpc: '2.0', id: 9, method: 'ping' }, headers)).status).toBe(
      200,
    );
  });

  it('refuses with 503 limits_unavailable and forwards nothing when the counter store fails', async () => {
    const recorder = await startRecorder();
    const server = await serveNotes(
      { url: recorder.url },
      {
        counterStore: {
          add: () => Promise.reject(new Error('store down')),
          get: () => Promise.reject(new Error('store down')),
        },
      },
    );
    const response = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(response.status).toBe(503);
    expect(await errorCodeOf(response)).toBe('limits_unavailable');
    expect(recorder.received).toEqual([]);
  });
});

describe("the MCP route blanks the server's credentials from what it relays", () => {
  for (const mode of ['event stream', 'JSON'] as const) {
    it(`redacts Bearer ghp_… quoted in a 200 JSON-RPC result and error (${mode})`, async () => {
      const tenant = tenantUrl(`&tools=leaky${mode === 'JSON' ? '&response=json' : ''}`);
      const server = await serveNotes({
        url: tenant.url,
        headers: { Authorization: `Bearer ${TOKEN}` },
        allowedTools: ['whoami', 'whoami_error'],
      });
      const session = await openSession(server);

      const result = await post(server, callTool(2, 'whoami'), session);
      expect(result.status).toBe(200);
      expect(result.headers.get('content-type')).toContain(
        mode === 'JSON' ? 'application/json' : 'text/event-stream',
      );
      const resultText = await result.text();
      expect(resultText).toContain('You are [redacted].');
      expect(resultText).not.toContain(TOKEN);

      const failed = await post(server, callTool(3, 'whoami_error'), session);
      expect(failed.status).toBe(200);
      const failedText = await failed.text();
      expect(failedText).toContain('"error"');
      expect(failedText).toContain('Refused: [redacted] may not do that.');
      expect(failedText).not.toContain(TOKEN);
      expect(failedText).not.toContain(TOKEN.slice(-12));
    });
  }

  it('redacts the token written with JSON escapes, and in headers', async () => {
    const escaped = `${TOKEN.slice(0, 4)}\\u${TOKEN.charCodeAt(4).toString(16).padStart(4, '0').toUpperCase()}${TOKEN.slice(5)}`;
    const upstream = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': TOKEN });
      res.end(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"bad token ${escaped}"}}`);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
    const { port } = upstream.address() as AddressInfo;
    const server = await serveNotes({
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    const response = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' });
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ error: { message: 'bad token [redacted]' } });
    expect(response.headers.get('mcp-session-id')).toBe('[redacted]');
  });
});

/** An upstream answering every POST with `totalBytes` of JSON or events, written only as fast as it is read. */
async function startFlood(kind: 'json' | 'events', totalBytes: number) {
  const state = { written: 0, closed: false };
  const server = createServer(async (req, res) => {
    for await (const _ of req) {
      // Drain the request.
    }
    res.on('close', () => {
      state.closed = true;
    });
    res.writeHead(200, {
      'content-type': kind === 'json' ? 'application/json' : 'text/event-stream',
    });
    const pad = 'x'.repeat(64 * 1024);
    const piece =
      kind === 'json'
        ? `"${pad}",`
        : `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${pad}"}}\n\n`;
    if (kind === 'json') res.write('{"jsonrpc":"2.0","id":1,"result":{"pad":[');
    const pump = (): void => {
      while (state.written < totalBytes && !state.closed) {
        state.written += piece.length;
        if (!res.write(piece)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!state.closed) res.end(kind === 'json' ? '""]}}' : '');
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, state };
}

const MIB = 1024 * 1024;

describe('the MCP route caps what it relays', () => {
  it('answers a 200 MiB JSON answer 502 mcp_response_too_large, having read only past the cap', async () => {
    const flood = await startFlood('json', 200 * MIB);
    const server = await serveNotes({ url: flood.url, maxResponseBytes: MIB });
    const response = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(response.status).toBe(502);
    expect(await errorCodeOf(response)).toBe('mcp_response_too_large');
    await waitFor(() => flood.state.closed, 10_000);
    // Socket buffers hold a few MiB at most: the upstream was stopped, not drained.
    expect(flood.state.written).toBeLessThan(32 * MIB);
  });

  it('cuts a 200 MiB event stream at the cap, and answers the waiting request with a typed JSON-RPC error', async () => {
    const flood = await startFlood('events', 200 * MIB);
    const server = await serveNotes({ url: flood.url, maxResponseBytes: MIB });
    const response = await post(server, { jsonrpc: '2.0', id: 'req-7', method: 'ping' });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.length).toBeLessThanOrEqual(MIB + 1024);
    const events = text.split('\n\n').filter((event) => event !== '');
    const last = JSON.parse(
      (events.at(-1) ?? '').replace(/^event: message\ndata: /, ''),
    ) as unknown;
    expect(last).toMatchObject({
      jsonrpc: '2.0',
      id: 'req-7',
      error: { code: -32603, data: { code: 'mcp_response_too_large' } },
    });
    // Every event before it is whole.
    for (const event of events.slice(0, -1)) expect(event.endsWith('"}}')).toBe(true);
    await waitFor(() => flood.state.closed, 10_000);
    expect(flood.state.written).toBeLessThan(32 * MIB);
  });

  it('caps a real MCP server answer both ways: JSON refused, event stream cut', async () => {
    for (const mode of ['', '&response=json']) {
      const tenant = tenantUrl(`&tools=leaky${mode}`);
      const server = await serveNotes({
        url: tenant.url,
        allowedTools: ['bulk'],
        maxResponseBytes: 256 * 1024,
      });
      const session = await openSession(server);
      const small = await post(server, callTool(2, 'bulk', { bytes: 1000 }), session);
      expect(small.status).toBe(200);
      expect(await small.text()).toContain('x'.repeat(1000));
      const big = await post(server, callTool(3, 'bulk', { bytes: 2 * MIB }), session);
      if (mode === '') {
        expect(big.status).toBe(200);
        const text = await big.text();
        expect(text).toContain('"mcp_response_too_large"');
        expect(text).not.toContain('x'.repeat(300 * 1024));
      } else {
        expect(big.status).toBe(502);
        expect(await errorCodeOf(big)).toBe('mcp_response_too_large');
      }
    }
  });
});

describe('MCP upstream options', () => {
  it('fail at creation when allowedTools, allowedMethods or maxResponseBytes is wrong', () => {
    const base = testProxyOptions({ upstream: 'http://127.0.0.1:1/v1', apiKey: KEY });
    const make = (upstream: Record<string, unknown>) => () =>
      createProxyHandler({
        ...base,
        mcp: { notes: { url: 'http://127.0.0.1:1/mcp', ...upstream } as McpUpstream },
      });
    expect(make({ allowedTools: 'echo' })).toThrow(/allowedTools/);
    expect(make({ allowedTools: ['echo', 7] })).toThrow(/allowedTools/);
    expect(make({ allowedMethods: [''] })).toThrow(/allowedMethods/);
    expect(make({ maxResponseBytes: 0 })).toThrow(/maxResponseBytes/);
    expect(make({ maxResponseBytes: 1.5 })).toThrow(/maxResponseBytes/);
    expect(make({ allowedTools: ['echo'], maxResponseBytes: 1024 })).not.toThrow();
  });
});
