// MCP OAuth in redirect mode, at the proxy: `start` takes a `returnTo` only on the starting
// page's origin, the proxy's, or one `allowedOrigins` lists; the callback then answers a 303
// back there with a marker that holds no code or token; `status` answers a yes or no per user.
// Against the real MCP OAuth test server (official SDK), as proxy-mcp-oauth.test.ts is.
import { afterEach, describe, expect, it } from 'vitest';
import { type McpOAuthServer, startMcpOAuthServer } from '../../setup/mcp-oauth-server';
import { type ProxyServer, sentinelKey, serveProxy } from './support';

const APP = 'https://app.example';
const servers: McpOAuthServer[] = [];
const proxies: ProxyServer[] = [];

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function setUp(): Promise<{ server: McpOAuthServer; route: string }> {
  const server = await startMcpOAuthServer();
  servers.push(server);
  const proxy = await serveProxy({
    upstream: 'http://127.0.0.1:9/v1',
    apiKey: sentinelKey(),
    authorize: (request) =>
      request.headers.get('x-user') === null
        ? new Response('Sign in first.', { status: 401 })
        : { userId: request.headers.get('x-user') ?? '' },
    allowedOrigins: [APP, 'https://other-app.example'],
    mcp: {
      notes: {
        url: server.mcpUrl,
        allowedTools: ['whoami'],
        auth: { type: 'oauth' },
      },
    },
  });
  proxies.push(proxy);
  return { server, route: `${proxy.url}/mcp/notes` };
}

function start(route: string, body: unknown, origin = APP, user = 'ada') {
  return fetch(`${route}/oauth/start`, {
    method: 'POST',
    headers: { 'x-user': user, origin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function status(route: string, user: string): Promise<unknown> {
  const answer = await fetch(`${route}/oauth/status`, { headers: { 'x-user': user } });
  expect(answer.status).toBe(200);
  return answer.json();
}

/** The authorization server's page (consents at once), then the proxy's callback: its answer. */
async function consentAndCallBack(authorizationUrl: string, user: string): Promise<Response> {
  const consented = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(consented.status).toBe(302);
  return fetch(consented.headers.get('location') ?? '', {
    redirect: 'manual',
    headers: { 'x-user': user },
  });
}

describe('MCP OAuth in redirect mode, at the proxy', () => {
  it('sends the browser back to returnTo with a marker and no code or token, and status says the user is authorised', async () => {
    const { server, route } = await setUp();
    expect(await status(route, 'ada')).toEqual({ authorized: false });
    const started = await start(route, { returnTo: `${APP}/settings?tab=mcp` });
    expect(started.status).toBe(200);
    const { authorizationUrl } = (await started.json()) as { authorizationUrl: string };

    const back = await consentAndCallBack(authorizationUrl, 'ada');
    expect(back.status).toBe(303);
    expect(back.headers.get('referrer-policy')).toBe('no-referrer');
    const location = back.headers.get('location') ?? '';
    expect(location).toBe(
      `${APP}/settings?tab=mcp#airlock-mcp-oauth=done&airlock-mcp-server=notes`,
    );
    const log = (await (await fetch(`${server.url}/control/log`)).json()) as {
      issued: { access: string; refresh: string }[];
    };
    expect(log.issued).toHaveLength(1);
    const statusText = JSON.stringify(await status(route, 'ada'));
    expect(statusText).toBe('{"authorized":true}');
    for (const { access, refresh } of log.issued) {
      for (const text of [location, statusText]) {
        expect(text).not.toContain(access);
        expect(text).not.toContain(refresh);
      }
    }
    // Another user of the app holds nothing.
    expect(await status(route, 'bob')).toEqual({ authorized: false });
  });

  it('takes another origin allowedOrigins lists, and the proxy’s own', async () => {
    const { route } = await setUp();
    expect((await start(route, { returnTo: 'https://other-app.example/back' })).status).toBe(200);
    const proxyOrigin = new URL(route).origin;
    expect((await start(route, { returnTo: `${proxyOrigin}/done` })).status).toBe(200);
  });

  it('refuses an origin it does not list, whatever the Origin header says, and stores no flow for it', async () => {
    const { route } = await setUp();
    for (const returnTo of ['https://attacker.example/', 'https://app.example.attacker.example/']) {
      const refused = await start(route, { returnTo });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({
        error: { code: 'field_not_allowed', param: 'returnTo' },
      });
    }
    // A page of an unlisted origin is refused by the CORS policy before the route reads anything.
    const foreign = await start(
      route,
      { returnTo: 'https://attacker.example/' },
      'https://attacker.example',
    );
    expect(foreign.status).toBe(403);
  });

  it('goes back to the page with a failed marker when the code is refused, and status stays no', async () => {
    const { route } = await setUp();
    const started = await start(route, { returnTo: `${APP}/back` });
    const { authorizationUrl } = (await started.json()) as { authorizationUrl: string };
    const consented = await fetch(authorizationUrl, { redirect: 'manual' });
    const callback = new URL(consented.headers.get('location') ?? '');
    callback.searchParams.set('code', 'a-code-the-server-never-issued');
    const back = await fetch(callback, { redirect: 'manual', headers: { 'x-user': 'ada' } });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(
      `${APP}/back#airlock-mcp-oauth=failed&airlock-mcp-server=notes`,
    );
    expect(await status(route, 'ada')).toEqual({ authorized: false });
  });

  it('answers status only to a signed-in caller, and only by GET', async () => {
    const { route } = await setUp();
    expect((await fetch(`${route}/oauth/status`)).status).toBe(401);
    const posted = await fetch(`${route}/oauth/status`, {
      method: 'POST',
      headers: { 'x-user': 'ada' },
    });
    expect(posted.status).toBe(405);
  });
});
