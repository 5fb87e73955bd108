import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { McpUpstream } from '../../../src/proxy';
import {
  type McpModernServer,
  type ModernLogEntry,
  startMcpModernServer,
} from '../../setup/mcp-modern-server';
import { type ProxyServer, sentinelKey, useProxyFixture } from './support';

const fixture = useProxyFixture(sentinelKey());

const VERSION = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'proxy-modern-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

let mcp: McpModernServer;
beforeAll(async () => {
  mcp = await startMcpModernServer();
});
afterAll(() => mcp.close());

/** A tenant of its own on the 2026-07-28 test server, so its log holds this test's requests only. */
function tenantUrl(): { url: string; log: () => Promise<ModernLogEntry[]> } {
  const tenant = `modern-${randomBytes(6).toString('hex')}`;
  return {
    url: `${mcp.url}/mcp?t=${tenant}`,
    log: async () =>
      (await fetch(`${mcp.url}/control/${tenant}/log`)).json() as Promise<ModernLogEntry[]>,
  };
}

/** A stateless request as a 2026-07-28 client sends it: envelope in `_meta`, mirrored headers. */
function modernRequest(id: number, method: string, params: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } };
}

function mirroredHeaders(body: { method: string; params: Record<string, unknown> }) {
  const name = body.params.name;
  return {
    'mcp-protocol-version': VERSION,
    'mcp-method': body.method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
  };
}

function post(server: ProxyServer, body: unknown, headers: Record<string, string>) {
  return fetch(`${server.url}/mcp/notes`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** Posts `body` with the headers a well-behaved client mirrors from it. */
function postModern(
  server: ProxyServer,
  body: ReturnType<typeof modernRequest>,
  extra: Record<string, string> = {},
) {
  return post(server, body, { ...mirroredHeaders(body), ...extra });
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
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [] } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, received };
}

function serveNotes(upstream: McpUpstream) {
  return fixture.serveProxy({ upstream: 'http://127.0.0.1:1/v1', mcp: { notes: upstream } });
}

describe('the MCP route in the 2026-07-28 revision', () => {
  it('passes server/discover and a stateless tools/call, and lists only the allowed tools', async () => {
    const tenant = tenantUrl();
    const server = await serveNotes({ url: tenant.url, allowedTools: ['echo'] });

    const discovered = await postModern(server, modernRequest(1, 'server/discover'));
    expect(discovered.status).toBe(200);
    expect(discovered.headers.get('mcp-session-id')).toBeNull();
    const discover = (await discovered.json()) as { result: { supportedVersions: string[] } };
    expect(discover.result.supportedVersions).toContain(VERSION);

    const listed = await postModern(server, modernRequest(2, 'tools/list'));
    const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools;
    expect(tools.map((tool) => tool.name)).toEqual(['echo']);

    const called = await postModern(
      server,
      modernRequest(3, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }),
    );
    expect(called.status).toBe(200);
    expect(await called.text()).toContain('echo: hi');

    const log = await tenant.log();
    const requests = log.filter((entry) => entry.kind === 'request');
    expect(requests.map((entry) => entry.method)).toEqual([
      'server/discover',
      'tools/list',
      'tools/call',
    ]);
    for (const entry of requests) {
      expect(entry).toMatchObject({ sessionHeader: null, envelopeVersion: VERSION });
      expect(entry.versionHeader).toBe(VERSION);
    }
  });

  it('refuses a stateless tools/call of a tool the app did not configure; the server never sees it', async () => {
    const tenant = tenantUrl();
    const server = await serveNotes({ url: tenant.url, allowedTools: ['echo'] });

    const refused = await postModern(
      server,
      modernRequest(1, 'tools/call', { name: 'delete_everything', arguments: {} }),
    );
    expect(refused.status).toBe(403);
    expect(await errorCodeOf(refused)).toBe('mcp_tool_not_allowed');
    // A forged Mcp-Name naming an allowed tool changes nothing: the body is what is checked.
    const forged = await postModern(
      server,
      modernRequest(2, 'tools/call', { name: 'delete_everything', arguments: {} }),
      { 'mcp-name': 'echo' },
    );
    expect(forged.status).toBe(403);
    expect(await errorCodeOf(forged)).toBe('mcp_tool_not_allowed');

    expect(await tenant.log()).toEqual([]);
  });

  it('refuses a request whose mirrored headers or envelope do not match its body; nothing is forwarded', async () => {
    const recorder = await startRecorder();
    const server = await serveNotes({
      url: recorder.url,
      allowedTools: ['echo', 'delete_everything'],
    });
    const echo = modernRequest(1, 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
    const withoutEnvelope = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const numericEnvelope = {
      ...modernRequest(3, 'tools/list'),
      params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': 20260728 } },
    };

    const refusals = await Promise.all([
      // An intermediary routing on Mcp-Name would see another tool than the server runs.
      postModern(server, echo, { 'mcp-name': 'delete_everything' }),
      postModern(server, echo, { 'mcp-method': 'tools/list' }),
      postModern(server, echo, { 'mcp-protocol-version': '2025-11-25' }),
      postModern(server, echo, { 'mcp-protocol-version': '2099-01-01' }),
      post(server, withoutEnvelope, {
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/list',
      }),
      post(server, numericEnvelope, {
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/list',
      }),
      postModern(server, echo, { 'mcp-name': '=?base64?not base64?=' }),
    ]);

    for (const refusal of refusals) {
      expect(refusal.status).toBe(400);
      expect(await errorCodeOf(refusal)).toBe('mcp_header_mismatch');
    }
    expect(recorder.received).toEqual([]);
  });

  it('passes a Base64 Mcp-Name that decodes to the body, and Mcp-Param-* headers, but no other page header', async () => {
    const recorder = await startRecorder();
    const server = await serveNotes({ url: recorder.url, allowedTools: ['echo'] });
    const body = modernRequest(1, 'tools/call', { name: 'echo', arguments: { text: 'hi' } });

    const answer = await postModern(server, body, {
      'mcp-name': `=?base64?${Buffer.from('echo').toString('base64')}?=`,
      'mcp-param-region': 'us-west1',
      'x-page-secret': 'not-for-the-server',
    });

    expect(answer.status).toBe(200);
    const [forwarded] = recorder.received;
    expect(forwarded?.headers).toMatchObject({
      'mcp-protocol-version': VERSION,
      'mcp-method': 'tools/call',
      'mcp-param-region': 'us-west1',
    });
    expect(forwarded?.headers['x-page-secret']).toBeUndefined();
    expect(JSON.parse(forwarded?.body ?? '')).toEqual(body);
  });

  it("relays a 2026-07-28 server's unsupported-version error with the versions it supports", async () => {
    const tenant = tenantUrl();
    const server = await serveNotes({ url: tenant.url, allowedTools: ['echo'] });
    const future = {
      ...modernRequest(1, 'tools/list'),
      params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    };

    const answer = await post(server, future, {
      'mcp-protocol-version': '2099-01-01',
      'mcp-method': 'tools/list',
    });

    expect(answer.status).toBe(400);
    const body = (await answer.json()) as {
      error: { code: number; data: { supported: string[] } };
    };
    expect(body.error.code).toBe(-32022);
    expect(body.error.data.supported).toContain(VERSION);
  });

  it('rebuilds an upstream JSON-RPC error from its checked fields, credentials blanked, and relays no other error body', async () => {
    const secret = `ghp_${randomBytes(18).toString('hex')}`;
    const bodies = [
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32022,
          message: `Unsupported, and your token is ${secret}`,
          data: {
            supported: [secret, VERSION, { nested: true }],
            requested: '2099-01-01',
            debug: secret,
          },
        },
        extra: secret,
      },
      { error: `not JSON-RPC: ${secret}` },
    ];
    const upstream = createServer(async (req, res) => {
      for await (const _ of req) {
        // drained
      }
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify(bodies.shift()));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    closers.push(() => {
      upstream.closeAllConnections();
      return new Promise<void>((resolve) => upstream.close(() => resolve()));
    });
    const { port } = upstream.address() as AddressInfo;
    const server = await serveNotes({
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { Authorization: `Bearer ${secret}` },
      allowedTools: ['echo'],
    });

    const rebuilt = await postModern(server, modernRequest(1, 'tools/list'));
    const refused = await postModern(server, modernRequest(2, 'tools/list'));

    expect(rebuilt.status).toBe(400);
    const text = await rebuilt.text();
    expect(text).not.toContain(secret.slice(-12));
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32022,
        message: expect.stringContaining('Unsupported'),
        data: { supported: [VERSION], requested: '2099-01-01' },
      },
    });
    expect(refused.status).toBe(400);
    expect(await errorCodeOf(refused)).toBe('upstream_error');
  });

  it('still passes a 2025-11-25 request, which has a version header and no envelope', async () => {
    const recorder = await startRecorder();
    const server = await serveNotes({ url: recorder.url, allowedTools: ['echo'] });

    const answer = await post(
      server,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 'session-1' },
    );

    expect(answer.status).toBe(200);
    expect(recorder.received).toHaveLength(1);
  });
});
