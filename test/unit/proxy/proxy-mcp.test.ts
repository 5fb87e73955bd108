import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyHandler } from '../../../src/proxy';
import { type McpTestServer, startMcpTestServer } from '../../setup/mcp-test-server';
import { sentinelKey, testProxyOptions, unusedPort, useProxyFixture } from './support';

const KEY = sentinelKey();
const SECRET = `mcp-secret-${sentinelKey()}`;
const fixture = useProxyFixture(KEY);

/** An upstream that records what reached it and answers as told (echoing what it got on errors). */
async function startRecordingUpstream(
  answer: { status: number; echo?: boolean } = { status: 200 },
) {
  const received: { method: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    received.push({ method: req.method ?? '', headers: req.headers, body });
    if (answer.status >= 400) {
      res.writeHead(answer.status, {
        'content-type': 'text/plain',
        'x-debug': String(req.headers.authorization),
      });
      res.end(answer.echo ? `refused credentials ${String(req.headers.authorization)}` : 'no');
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'mcp-session-id': 'session-from-upstream',
      'mcp-protocol-version': '2025-11-25',
      'x-internal': 'not for the page',
    });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'proxy-test', version: '1.0.0' },
  },
};

function postMcp(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function everythingIn(response: Response): Promise<string> {
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
  return `${headers}\n\n${await response.text()}`;
}

describe('the proxy MCP route', () => {
  let mcp: McpTestServer;
  beforeAll(async () => {
    mcp = await startMcpTestServer();
  });
  afterAll(() => mcp.close());

  it('refuses a name it was not given, and forwards nothing', async () => {
    const upstream = await startRecordingUpstream();
    try {
      const server = await fixture.serveProxy({
        upstream: 'http://127.0.0.1:1/v1',
        mcp: { notes: { url: upstream.url } },
      });
      for (const path of [
        '/mcp/other',
        '/mcp/notes/x',
        '/mcp/',
        '/mcp/__proto__',
        '/mcp/..%2Fnotes',
      ]) {
        const response = await postMcp(`${server.url}${path}`, INITIALIZE);
        expect(response.status, path).toBe(404);
      }
      expect(upstream.received).toEqual([]);
    } finally {
      await upstream.close();
    }
  });

  it('adds the configured credentials, forwards only MCP headers, and never sends the page its own', async () => {
    const upstream = await startRecordingUpstream();
    try {
      const server = await fixture.serveProxy({
        upstream: 'http://127.0.0.1:1/v1',
        mcp: { notes: { url: upstream.url, headers: { Authorization: `Bearer ${SECRET}` } } },
      });
      const response = await postMcp(`${server.url}/mcp/notes`, INITIALIZE, {
        authorization: 'Bearer page-token',
        cookie: 'session=abc',
        'mcp-protocol-version': '2025-11-25',
        'x-other': 'dropped',
      });
      expect(response.status).toBe(200);
      const [seen] = upstream.received;
      expect(seen?.headers.authorization).toBe(`Bearer ${SECRET}`);
      expect(seen?.headers['mcp-protocol-version']).toBe('2025-11-25');
      expect(seen?.headers.cookie).toBeUndefined();
      expect(seen?.headers['x-other']).toBeUndefined();
      expect(JSON.parse(seen?.body ?? '')).toEqual(INITIALIZE);
      const text = await everythingIn(response);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('x-internal');
    } finally {
      await upstream.close();
    }
  });

  it('never shows the credentials when the upstream echoes them in an error', async () => {
    for (const status of [400, 401, 404, 500]) {
      const upstream = await startRecordingUpstream({ status, echo: true });
      try {
        const server = await fixture.serveProxy({
          upstream: 'http://127.0.0.1:1/v1',
          mcp: { notes: { url: upstream.url, headers: { Authorization: `Bearer ${SECRET}` } } },
        });
        const response = await postMcp(`${server.url}/mcp/notes`, INITIALIZE);
        expect(response.status).toBe(status === 401 ? 502 : status);
        expect(await everythingIn(response)).not.toContain(SECRET.slice(-12));
      } finally {
        await upstream.close();
      }
    }
  });

  it('says an unreachable upstream is unreachable without naming its address', async () => {
    const port = await unusedPort();
    const server = await fixture.serveProxy({
      upstream: 'http://127.0.0.1:1/v1',
      mcp: { notes: { url: `http://127.0.0.1:${port}/mcp?token=${SECRET}` } },
    });
    const response = await postMcp(`${server.url}/mcp/notes`, INITIALIZE);
    expect(response.status).toBe(502);
    const text = await everythingIn(response);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(String(port));
  });

  it('round-trips the session header with a real MCP server, exposed to the page by CORS', async () => {
    const origin = 'http://app.example';
    const server = await fixture.serveProxy({
      upstream: 'http://127.0.0.1:1/v1',
      allowedOrigins: [origin],
      mcp: {
        notes: {
          url: `${mcp.url}/mcp?t=secret`,
          headers: { Authorization: 'Bearer upstream-secret' },
          allowedTools: ['echo'],
        },
      },
    });
    const initialized = await postMcp(`${server.url}/mcp/notes`, INITIALIZE, { origin });
    expect(initialized.status).toBe(200);
    const sessionId = initialized.headers.get('mcp-session-id');
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const exposed = initialized.headers.get('access-control-expose-headers') ?? '';
    expect(exposed).toContain('mcp-session-id');
    await initialized.text();

    const headers = {
      origin,
      'mcp-session-id': sessionId ?? '',
      'mcp-protocol-version': '2025-11-25',
    };
    const notified = await postMcp(
      `${server.url}/mcp/notes`,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      headers,
    );
    expect(notified.status).toBe(202);
    const listed = await postMcp(
      `${server.url}/mcp/notes`,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      headers,
    );
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain('"name":"echo"');

    const ended = await fetch(`${server.url}/mcp/notes`, { method: 'DELETE', headers });
    expect(ended.status).toBe(200);
    const afterEnd = await postMcp(
      `${server.url}/mcp/notes`,
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      headers,
    );
    // The session is gone upstream: the client is told with the status it needs.
    expect(afterEnd.status).toBe(404);
  });

  it('answers a preflight for the MCP headers and DELETE from an allowed origin only', async () => {
    const server = await fixture.serveProxy({
      upstream: 'http://127.0.0.1:1/v1',
      allowedOrigins: ['http://app.example'],
      mcp: { notes: { url: 'http://127.0.0.1:1/mcp' } },
    });
    const preflight = (origin: string) =>
      fetch(`${server.url}/mcp/notes`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'DELETE',
          'access-control-request-headers':
            'content-type, mcp-session-id, mcp-protocol-version, last-event-id',
        },
      });
    const allowed = await preflight('http://app.example');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-methods')).toContain('DELETE');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('mcp-session-id');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version');
    const foreign = await preflight('http://evil.example');
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const refused = await postMcp(`${server.url}/mcp/notes`, INITIALIZE, {
      origin: 'http://evil.example',
    });
    expect(refused.status).toBe(403);
  });

  it('refuses a body over the cap and one that is not JSON, before reaching the upstream', async () => {
    const upstream = await startRecordingUpstream();
    try {
      const server = await fixture.serveProxy({
        upstream: 'http://127.0.0.1:1/v1',
        maxBodyBytes: 1_000,
        mcp: { notes: { url: upstream.url } },
      });
      const big = await postMcp(`${server.url}/mcp/notes`, {
        ...INITIALIZE,
        pad: 'x'.repeat(2_000),
      });
      expect(big.status).toBe(413);
      const broken = await postMcp(`${server.url}/mcp/notes`, '{"jsonrpc":');
      expect(broken.status).toBe(400);
      const put = await fetch(`${server.url}/mcp/notes`, { method: 'PUT', body: '{}' });
      expect(put.status).toBe(405);
      expect(upstream.received).toEqual([]);
    } finally {
      await upstream.close();
    }
  });

  it('fails at creation on an MCP upstream it cannot use', () => {
    const base = testProxyOptions({ upstream: 'http://127.0.0.1:1/v1', apiKey: KEY });
    expect(() => createProxyHandler({ ...base, mcp: { 'bad name': { url: 'http://x' } } })).toThrow(
      /mcp/,
    );
    expect(() => createProxyHandler({ ...base, mcp: { notes: { url: 'ftp://x' } } })).toThrow(
      /http/,
    );
  });
});
