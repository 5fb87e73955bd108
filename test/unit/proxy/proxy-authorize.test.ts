import { createServer as createViteServer } from 'vite';
import { describe, expect, it } from 'vitest';
import {
  type Authorize,
  airlockProxy,
  createProxyHandler,
  type ProxyOptions,
} from '../../../src/proxy';
import type { ModelSession } from '../../../src/testing';
import { chatBody, type ProxyServer, sentinelKey, useProxyFixture } from './support';

const KEY = sentinelKey();

const fixture = useProxyFixture(KEY);

function postChat(server: ProxyServer, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/llm/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(chatBody()),
  });
}

/** The app's own session check: a cookie naming a signed-in user. */
const sessionCookie: Authorize = async (request) => {
  const match = /(?:^|;\s*)session=([a-z]+)/.exec(request.headers.get('cookie') ?? '');
  if (match?.[1] === undefined) return new Response('Sign in first.', { status: 401 });
  return { userId: match[1] };
};

async function proxyWith(
  session: ModelSession,
  options: Partial<ProxyOptions>,
): Promise<ProxyServer> {
  return fixture.serveProxy({ upstream: session.baseURL, ...options });
}

describe('who may call the proxy', () => {
  it('refuses to be created with neither authorize nor allowAnonymous, naming both', () => {
    const attempt = () =>
      createProxyHandler({ upstream: 'https://api.openai.com/v1', apiKey: KEY, logger: () => {} });
    expect(attempt).toThrow(expect.objectContaining({ code: 'invalid-options' }));
    expect(attempt).toThrow(/`authorize`.*`allowAnonymous: true`/);
  });

  it('holds the Vite plugin to the same rule: its dev server does not start without either, and warns when anonymous', async () => {
    const warnings: string[] = [];
    const logger = (message: string) => warnings.push(message);
    const serve = (plugin: ReturnType<typeof airlockProxy>) =>
      createViteServer({
        configFile: false,
        logLevel: 'silent',
        root: new URL('.', import.meta.url).pathname,
        plugins: [plugin],
        server: { middlewareMode: true, hmr: false, ws: false },
        optimizeDeps: { noDiscovery: true, include: [] },
      });

    await expect(
      serve(airlockProxy({ upstream: 'https://api.openai.com/v1', apiKey: KEY, logger })),
    ).rejects.toMatchObject({ code: 'invalid-options' });
    expect(warnings).toEqual([]);
    const server = await serve(
      airlockProxy({
        upstream: 'https://api.openai.com/v1',
        apiKey: KEY,
        logger,
        allowAnonymous: true,
      }),
    );
    await server.close();
    expect(warnings).toEqual([expect.stringContaining('allowAnonymous')]);
  });

  it('logs a warning when it is created anonymous, and none when it has authorize', () => {
    const warnings: string[] = [];
    const logger = (message: string) => warnings.push(message);
    createProxyHandler({
      upstream: 'https://api.openai.com/v1',
      apiKey: KEY,
      logger,
      authorize: sessionCookie,
    });
    expect(warnings).toEqual([]);
    createProxyHandler({
      upstream: 'https://api.openai.com/v1',
      apiKey: KEY,
      logger,
      allowAnonymous: true,
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/allowAnonymous/);
    expect(warnings[0]).not.toContain(KEY);
  });

  it('answers with the Response authorize returns, for no Origin and a forged Origin alike, and forwards nothing', async () => {
    const session = fixture.models.createSession([{ text: 'Hi, Ada.' }]);
    const server = await proxyWith(session, { authorize: sessionCookie });

    // curl from a server: no Origin, no cookie.
    const bare = await postChat(server);
    expect(bare.status).toBe(401);
    expect(await bare.text()).toBe('Sign in first.');
    // A forged Origin naming the proxy's own host passes the origin check, not authorize.
    const forged = await postChat(server, { origin: server.url });
    expect(forged.status).toBe(401);
    await forged.text();
    expect(session.requests).toHaveLength(0);

    const signedIn = await postChat(server, { cookie: 'session=ada' });
    expect(signedIn.status).toBe(200);
    await signedIn.text();
    expect(session.requests).toHaveLength(1);
  });

  it('answers 500 with a short body when authorize throws, never forwards, and logs no secret from the error', async () => {
    const session = fixture.models.createSession([{ text: 'unused' }]);
    const logs: string[] = [];
    const server = await proxyWith(session, {
      logger: (message) => logs.push(message),
      authorize: () => {
        throw new Error('jwt secret hunter2 rejected');
      },
    });

    const response = await postChat(server, { cookie: 'session=ada' });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: {
        message: 'The proxy could not check who is calling.',
        type: 'server_error',
        param: null,
        code: 'authorize_failed',
      },
    });
    expect(text).not.toContain('hunter2');
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect(session.requests).toHaveLength(0);
    expect(logs.join('\n')).toMatch(/authorize threw \(Error\)/);
    expect(logs.join('\n')).not.toContain('hunter2');
  });

  it('answers 500 when authorize breaks its contract (a rejection, undefined, a blank userId, bad limits), never forwarding', async () => {
    const session = fixture.models.createSession([{ text: 'unused' }]);
    // Made when asked for, so the rejection is never left unhandled in between.
    const answers: (() => unknown)[] = [
      () => Promise.reject(new TypeError('boom')),
      () => undefined,
      () => ({ userId: '   ' }),
      () => ({ userId: 42 }),
      () => ({ userId: 'ada', limits: { requestsPerMinute: -1 } }),
      () => ({ userId: 'ada', limits: { requestsPerMonth: 5 } }),
      () => ({ userId: 'ada', limits: { concurrentRequests: 1.5 } }),
      () => ({ userId: 'ada', limits: { concurrentRequests: '3' } }),
      () => ({ userId: 'ada', limits: { concurrentRequests: Number.POSITIVE_INFINITY } }),
    ];
    let index = 0;
    const server = await proxyWith(session, {
      authorize: (() => answers[index++]?.()) as Authorize,
    });
    for (const [at] of answers.entries()) {
      const response = await postChat(server);
      expect(response.status, `answer ${at}`).toBe(500);
      expect(await response.json()).toMatchObject({ error: { code: 'authorize_failed' } });
    }
    expect(session.requests).toHaveLength(0);
  });

  it('gives authorize the request before the body is read, and forwards the body intact after it', async () => {
    const session = fixture.models.createSession([{ text: 'Hi.' }]);
    let sawBodyUnread = false;
    const server = await proxyWith(session, {
      authorize: (request) => {
        sawBodyUnread = !request.bodyUsed;
        return { userId: 'ada' };
      },
    });
    const response = await postChat(server);
    expect(response.status).toBe(200);
    await response.text();
    expect(sawBodyUnread).toBe(true);
    expect(session.requests[0]?.body).toMatchObject({
      messages: [{ role: 'user', content: 'Hello?' }],
    });
  });
});

describe('authorize answers with headers of their own', () => {
  it('passes on a redirect authorize returns (immutable headers) with CORS added for an allowed origin', async () => {
    const handler = createProxyHandler({
      upstream: 'https://upstream.test/v1',
      apiKey: KEY,
      allowedOrigins: ['https://app.example'],
      paths: ['chat/completions', 'models'],
      authorize: () => Response.redirect('https://app.example/login', 302),
      fetch: () => Promise.reject(new Error('must not be called')),
    });
    const response = await handler(
      new Request('http://proxy.test/llm/v1/models', {
        headers: { origin: 'https://app.example' },
      }),
    );
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://app.example/login');
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });
});
