// MCP OAuth held by the proxy, against a real MCP server with OAuth built from the official
// SDK's server side (test/setup/mcp-oauth-server.ts). Every answer the page would get (the
// proxy's answers, the callback page, MCP answers, errors) is recorded, and after each test
// none may hold a token the authorization server issued.
import { afterEach, describe, expect, it } from 'vitest';
import type { McpOAuth } from '../../../src/proxy';
import {
  type McpOAuthServer,
  type McpOAuthServerOptions,
  startMcpOAuthServer,
} from '../../setup/mcp-oauth-server';
import { type ProxyServer, sentinelKey, serveProxy } from './support';

/** Everything the page received in the test: status, headers and body, as text. */
const received: string[] = [];
const servers: McpOAuthServer[] = [];
const proxies: ProxyServer[] = [];

afterEach(async () => {
  try {
    for (const server of servers) {
      const log = (await (await fetch(`${server.url}/control/log`)).json()) as {
        issued: { access: string; refresh: string }[];
      };
      const tokens = log.issued.flatMap(({ access, refresh }) => [access, refresh]);
      for (const text of received) {
        for (const token of tokens) expect(text).not.toContain(token);
      }
    }
  } finally {
    received.length = 0;
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
    await Promise.all(servers.splice(0).map((server) => server.close()));
  }
});

/** A fetch as the page's: what comes back is recorded for the no-token check. */
async function pageFetch(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(url, { ...init, redirect: 'manual' });
  const text = await response.text();
  received.push(`${response.status} ${JSON.stringify([...response.headers])} ${text}`);
  return { status: response.status, text, headers: response.headers };
}

interface Setup {
  readonly server: McpOAuthServer;
  readonly proxy: ProxyServer;
  /** `<proxy>/mcp/notes` */
  readonly route: string;
}

async function setUp(
  options: {
    server?: McpOAuthServerOptions;
    auth?: Partial<McpOAuth>;
    now?: () => number;
    allowedOrigins?: '*';
  } = {},
): Promise<Setup> {
  const server = await startMcpOAuthServer(options.server);
  servers.push(server);
  const proxy = await serveProxy({
    upstream: 'http://127.0.0.1:9/v1',
    apiKey: sentinelKey(),
    // The app's sign-in: the user is named by a header (a session cookie in a real app).
    authorize: (request) =>
      request.headers.get('x-user') === null
        ? new Response('Sign in first.', { status: 401 })
        : { userId: request.headers.get('x-user') ?? '' },
    ...(options.now ? { now: options.now } : {}),
    ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
    mcp: {
      notes: {
        url: server.mcpUrl,
        allowedTools: ['whoami', 'echo_auth'],
        auth: { type: 'oauth', ...options.auth },
      },
    },
  });
  proxies.push(proxy);
  return { server, proxy, route: `${proxy.url}/mcp/notes` };
}

/** Starts the flow as `user`, consents at the authorization server as `serverUser`, and returns the callback URL. */
async function consent(
  setup: Setup,
  user: string,
  serverUser = `${user}-at-server`,
): Promise<string> {
  const started = await pageFetch(`${setup.route}/oauth/start`, {
    method: 'POST',
    headers: { 'x-user': user },
  });
  expect(started.status).toBe(200);
  const { authorizationUrl } = JSON.parse(started.text) as { authorizationUrl: string };
  // The popup: the authorization server's page, which consents at once and redirects back.
  const consented = await fetch(authorizationUrl, {
    redirect: 'manual',
    headers: { 'x-test-user': serverUser },
  });
  expect(consented.status).toBe(302);
  return consented.headers.get('location') ?? '';
}

async function authorize(setup: Setup, user: string, serverUser?: string): Promise<void> {
  const callback = await pageFetch(await consent(setup, user, serverUser), {
    headers: { 'x-user': user },
  });
  expect(callback.status).toBe(200);
  expect(callback.text).toContain('"outcome":"done"');
}

let nextId = 1;
async function callTool(setup: Setup, user: string, name: string) {
  const answer = await pageFetch(setup.route, {
    method: 'POST',
    headers: {
      'x-user': user,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name, arguments: {} },
    }),
  });
  return {
    ...answer,
    json: () =>
      JSON.parse(answer.text) as {
        result?: { content: { text: string }[] };
        error?: { code: string; param: string };
      },
  };
}

async function whoami(setup: Setup, user: string): Promise<string | undefined> {
  const answer = await callTool(setup, user, 'whoami');
  return answer.status === 200 ? answer.json().result?.content[0]?.text : `HTTP ${answer.status}`;
}

async function serverLog(server: McpOAuthServer) {
  return (await (await fetch(`${server.url}/control/log`)).json()) as {
    issued: { access: string; refresh: string; user: string }[];
    revoked: string[];
    fetchedClientDocuments: string[];
  };
}

describe('MCP OAuth through the proxy', () => {
  it('refuses a user who has not authorised with 401 mcp_auth_required naming the server', async () => {
    const setup = await setUp();
    const answer = await callTool(setup, 'alice', 'whoami');
    expect(answer.status).toBe(401);
    expect(answer.json().error).toMatchObject({ code: 'mcp_auth_required', param: 'notes' });
    expect(answer.headers.get('x-airlock-proxy-error')).toBe('mcp_auth_required');
  });

  it('authorises end to end: Client ID Metadata Document, PKCE S256, state, resource; then calls carry the user’s token', async () => {
    const setup = await setUp();
    const callbackUrl = await consent(setup, 'alice');
    const callback = new URL(callbackUrl);
    expect(callback.pathname).toBe('/mcp/notes/oauth/callback');
    const log = await serverLog(setup.server);
    // The authorization server fetched the proxy's metadata document: its URL is the client id.
    expect(log.fetchedClientDocuments).toEqual([`${setup.route}/oauth/client-metadata.json`]);
    const page = await pageFetch(callbackUrl, { headers: { 'x-user': 'alice' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'nonce-/);
    expect(await whoami(setup, 'alice')).toBe('alice-at-server');
  });

  it('puts S256, a state, the resource and the redirect to the proxy in the authorization URL', async () => {
    const setup = await setUp();
    const started = await pageFetch(`${setup.route}/oauth/start`, {
      method: 'POST',
      headers: { 'x-user': 'alice' },
    });
    const url = new URL(
      (JSON.parse(started.text) as { authorizationUrl: string }).authorizationUrl,
    );
    expect(url.origin).toBe(setup.server.url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^state_[0-9a-f]{24}$/);
    expect(url.searchParams.get('resource')).toBe(setup.server.mcpUrl);
    expect(url.searchParams.get('redirect_uri')).toBe(`${setup.route}/oauth/callback`);
    expect(url.searchParams.get('scope')).toBe('mcp:tools');
  });

  it('keeps tokens per user: a second user gets mcp_auth_required, never the first one’s token', async () => {
    const setup = await setUp();
    await authorize(setup, 'alice');
    const bob = await callTool(setup, 'bob', 'whoami');
    expect(bob.status).toBe(401);
    expect(bob.json().error?.code).toBe('mcp_auth_required');
    await authorize(setup, 'bob');
    expect(await whoami(setup, 'bob')).toBe('bob-at-server');
    expect(await whoami(setup, 'alice')).toBe('alice-at-server');
  });

  it('refreshes once and sends again when the server refuses a token that ran out', async () => {
    const setup = await setUp();
    await authorize(setup, 'alice');
    await fetch(`${setup.server.url}/control/expire-access`, { method: 'POST' });
    expect(await whoami(setup, 'alice')).toBe('alice-at-server');
    const log = await serverLog(setup.server);
    expect(log.issued.map((token) => token.user)).toEqual(['alice-at-server', 'alice-at-server']);
    // The new token serves later calls: no refresh each time.
    expect(await whoami(setup, 'alice')).toBe('alice-at-server');
    expect((await serverLog(setup.server)).issued).toHaveLength(2);
  });

  it('refreshes once for calls that find the token spent at the same time', async () => {
    const setup = await setUp();
    await authorize(setup, 'alice');
    await fetch(`${setup.server.url}/control/expire-access`, { method: 'POST' });
    const users = await Promise.all([1, 2, 3].map(() => whoami(setup, 'alice')));
    expect(users).toEqual(['alice-at-server', 'alice-at-server', 'alice-at-server']);
    expect((await serverLog(setup.server)).issued).toHaveLength(2);
  });

  it('refreshes before sending when the token has run out by the proxy’s clock', async () => {
    let now = Date.now();
    const setup = await setUp({ now: () => now, server: { accessTokenSeconds: 600 } });
    await authorize(setup, 'alice');
    now += 601_000;
    expect(await whoami(setup, 'alice')).toBe('alice-at-server');
    expect((await serverLog(setup.server)).issued).toHaveLength(2);
  });

  it('asks for authorisation again when the refresh is refused', async () => {
    const setup = await setUp();
    await authorize(setup, 'alice');
    const [first] = (await serverLog(setup.server)).issued;
    // Revoked at the server behind the proxy's back: the refresh token is dead too.
    await fetch(`${setup.server.url}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({
        token: first?.refresh ?? '',
        client_id: `${setup.route}/oauth/client-metadata.json`,
      }),
    });
    const answer = await callTool(setup, 'alice', 'whoami');
    expect(answer.status).toBe(401);
    expect(answer.json().error?.code).toBe('mcp_auth_required');
  });

  it('signs out: revokes at the server, which then refuses the old token, and asks for authorisation again', async () => {
    const setup = await setUp();
    await authorize(setup, 'alice');
    const [grant] = (await serverLog(setup.server)).issued;
    const signedOut = await pageFetch(`${setup.route}/oauth/sign-out`, {
      method: 'POST',
      headers: { 'x-user': 'alice' },
    });
    expect(JSON.parse(signedOut.text)).toEqual({ signedOut: true, revoked: true });
    expect((await serverLog(setup.server)).revoked).toEqual([grant?.refresh, grant?.access]);
    const direct = await fetch(setup.server.mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${grant?.access}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(direct.status).toBe(401);
    const answer = await callTool(setup, 'alice', 'whoami');
    expect(answer.json().error?.code).toBe('mcp_auth_required');
  });

  it('blanks the user’s token from an MCP answer that echoes it', async () => {
    const setup = await setUp();
    await authorize(setup, 'alice');
    const answer = await callTool(setup, 'alice', 'echo_auth');
    expect(answer.status).toBe(200);
    expect(answer.json().result?.content[0]?.text).toBe('you sent Bearer [redacted]');
  });

  it('registers dynamically, once, when the server takes no Client ID Metadata Documents', async () => {
    const setup = await setUp({ server: { clientIdMetadataDocuments: false } });
    await authorize(setup, 'alice');
    await authorize(setup, 'bob');
    expect(await whoami(setup, 'bob')).toBe('bob-at-server');
    const log = await serverLog(setup.server);
    expect(log.fetchedClientDocuments).toEqual([]);
  });

  it('refuses a server that takes neither a metadata document nor registration, unless given a client id', async () => {
    const setup = await setUp({
      server: { clientIdMetadataDocuments: false, dynamicRegistration: false },
    });
    const started = await pageFetch(`${setup.route}/oauth/start`, {
      method: 'POST',
      headers: { 'x-user': 'alice' },
    });
    expect(started.status).toBe(502);
    expect(JSON.parse(started.text).error).toMatchObject({
      code: 'mcp_oauth_failed',
      param: 'notes',
    });
    expect(started.text).toContain('give `clientId`');
  });
});

describe('MCP OAuth through the proxy, hostile callbacks and servers', () => {
  it('refuses a forged state, and nothing is stored', async () => {
    const setup = await setUp();
    const page = await pageFetch(
      `${setup.route}/oauth/callback?code=abc&state=state_000000000000000000000000`,
      {
        headers: { 'x-user': 'alice' },
      },
    );
    expect(page.status).toBe(400);
    expect(page.text).toContain('unknown, used or expired');
    expect(page.text).not.toContain('postMessage');
    expect((await callTool(setup, 'alice', 'whoami')).status).toBe(401);
  });

  it('uses a state once: the same callback a second time is refused', async () => {
    const setup = await setUp();
    const callbackUrl = await consent(setup, 'alice');
    expect((await pageFetch(callbackUrl, { headers: { 'x-user': 'alice' } })).status).toBe(200);
    const again = await pageFetch(callbackUrl, { headers: { 'x-user': 'alice' } });
    expect(again.status).toBe(400);
    expect(again.text).toContain('unknown, used or expired');
  });

  it('refuses a state that has expired by the proxy’s clock', async () => {
    let now = Date.now();
    const setup = await setUp({ now: () => now, auth: { stateTtlMs: 60_000 } });
    const callbackUrl = await consent(setup, 'alice');
    now += 61_000;
    const page = await pageFetch(callbackUrl, { headers: { 'x-user': 'alice' } });
    expect(page.status).toBe(400);
    expect((await serverLog(setup.server)).issued).toEqual([]);
  });

  it('refuses a callback brought by another user than the one who started, and stores no grant for either', async () => {
    const setup = await setUp();
    const callbackUrl = await consent(setup, 'mallory', 'victim-at-server');
    const page = await pageFetch(callbackUrl, { headers: { 'x-user': 'alice' } });
    expect(page.status).toBe(403);
    expect((await serverLog(setup.server)).issued).toEqual([]);
    expect((await callTool(setup, 'alice', 'whoami')).status).toBe(401);
    expect((await callTool(setup, 'mallory', 'whoami')).status).toBe(401);
  });

  it('refuses a code injected into another flow: PKCE binds the code to its own verifier', async () => {
    const setup = await setUp();
    const alices = new URL(await consent(setup, 'alice'));
    const mallorys = new URL(await consent(setup, 'mallory', 'mallory-at-server'));
    const injected = new URL(alices);
    injected.searchParams.set('code', mallorys.searchParams.get('code') ?? '');
    const page = await pageFetch(injected.href, { headers: { 'x-user': 'alice' } });
    expect(page.status).toBe(502);
    expect(page.text).toContain('refused the code');
    expect((await serverLog(setup.server)).issued).toEqual([]);
    expect((await callTool(setup, 'alice', 'whoami')).status).toBe(401);
  });

  it('refuses metadata that sends the token endpoint to another origin, unless that origin is trusted', async () => {
    const elsewhere = 'http://127.0.0.2:9';
    const hostile = {
      metadata: (metadata: Record<string, unknown>) => ({
        ...metadata,
        token_endpoint: `${elsewhere}/token`,
      }),
    };
    const setup = await setUp({ server: hostile });
    const started = await pageFetch(`${setup.route}/oauth/start`, {
      method: 'POST',
      headers: { 'x-user': 'alice' },
    });
    expect(started.status).toBe(502);
    expect(JSON.parse(started.text).error.code).toBe('mcp_oauth_failed');
    expect(started.text).toContain('token_endpoint is on http://127.0.0.2:9');
    const trusted = await setUp({ server: hostile, auth: { trustedOrigins: [elsewhere] } });
    const allowed = await pageFetch(`${trusted.route}/oauth/start`, {
      method: 'POST',
      headers: { 'x-user': 'alice' },
    });
    expect(allowed.status).toBe(200);
  });

  it('puts only an origin in the callback page: a forged Origin header cannot write its CSP', async () => {
    // Any origin may call this proxy, so the forged header passes the door.
    const setup = await setUp({ allowedOrigins: '*' });
    const started = await pageFetch(`${setup.route}/oauth/start`, {
      method: 'POST',
      headers: { 'x-user': 'alice', origin: 'https://a.example; script-src *' },
    });
    expect(started.status).toBe(200);
    const { authorizationUrl } = JSON.parse(started.text) as { authorizationUrl: string };
    const consented = await fetch(authorizationUrl, { redirect: 'manual' });
    const page = await pageFetch(consented.headers.get('location') ?? '', {
      headers: { 'x-user': 'alice' },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(
      new RegExp(`frame-ancestors ${setup.proxy.url.replace(/[.]/g, '\\.')}$`),
    );
  });

  it('caps metadata documents: a huge one is refused, not read whole', async () => {
    const huge = JSON.stringify({ issuer: 'x', padding: 'a'.repeat(2 * 1024 * 1024) });
    const setup = await setUp({
      server: { rawMetadata: huge },
      auth: { maxMetadataBytes: 16_384 },
    });
    const started = await pageFetch(`${setup.route}/oauth/start`, {
      method: 'POST',
      headers: { 'x-user': 'alice' },
    });
    expect(started.status).toBe(502);
    expect(started.text).toContain('passed 16384 bytes');
  });

  it('refuses a malformed callback: no code, an oversized state', async () => {
    const setup = await setUp();
    const callbackUrl = new URL(await consent(setup, 'alice'));
    callbackUrl.searchParams.delete('code');
    const noCode = await pageFetch(callbackUrl.href, { headers: { 'x-user': 'alice' } });
    expect(noCode.status).toBe(400);
    const long = await pageFetch(`${setup.route}/oauth/callback?code=a&state=${'s'.repeat(5000)}`, {
      headers: { 'x-user': 'alice' },
    });
    expect(long.status).toBe(400);
  });

  it('serves OAuth routes only for OAuth servers and known actions', async () => {
    const setup = await setUp();
    expect(
      (await pageFetch(`${setup.route}/oauth/tokens`, { headers: { 'x-user': 'alice' } })).status,
    ).toBe(404);
    expect(
      (
        await pageFetch(`${setup.route}/oauth/start/x`, {
          method: 'POST',
          headers: { 'x-user': 'alice' },
        })
      ).status,
    ).toBe(404);
    expect(
      (await pageFetch(`${setup.route}/oauth/start`, { headers: { 'x-user': 'alice' } })).status,
    ).toBe(405);
    expect((await pageFetch(`${setup.route}/oauth/start`, { method: 'POST' })).status).toBe(401);
  });
});
