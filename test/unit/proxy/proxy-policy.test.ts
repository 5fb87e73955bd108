import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createProxyHandler } from '../../../src/proxy';
import {
  bodyOf,
  chatBody,
  postChat,
  sentinelKey,
  testProxyOptions,
  unusedPort,
  useProxyFixture,
} from './support';

const KEY = sentinelKey();
const APP_ORIGIN = 'https://app.example';

const fixture = useProxyFixture(KEY);

/** A request over `agent`'s sockets, resolving with the status once the response has ended. */
function send(agent: Agent, url: string, method: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, agent, timeout: 3000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${url} timed out`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

describe('the proxy handler', () => {
  it('refuses to be created without an API key, before serving anything', () => {
    expect(() =>
      createProxyHandler({
        upstream: 'https://api.openai.com/v1',
        apiKey: ' ',
        allowAnonymous: true,
      }),
    ).toThrow(/apiKey.*empty/);
  });

  it('answers a path it does not serve with 404 and a known path with the wrong method with 405, in OpenAI error shape, and the upstream receives nothing', async () => {
    const session = fixture.models.createSession([{ text: 'unused' }]);
    const server = await fixture.proxyTo(session, { paths: ['chat/completions', 'models'] });

    const attempts: [string, string, number][] = [
      ['GET', '/llm/v1/files', 404],
      ['POST', '/llm/v1/embeddings', 404], // a route, but not in the default `paths`
      ['POST', '/llm/v1/responses', 404],
      ['GET', '/llm/v1/chat/completions', 405], // right path, wrong method
      ['POST', '/llm/v1/models', 405],
      ['GET', '/llm/v1/models/gpt-4o', 404],
      ['GET', '/llm/v1/models/', 404],
      ['GET', '/elsewhere/models', 404],
      ['GET', '/llm/v1//models', 404],
    ];
    for (const [method, path, status] of attempts) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(response.status, `${method} ${path}`).toBe(status);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toEqual({
        error: {
          message: expect.stringContaining(status === 404 ? path : method),
          type: 'invalid_request_error',
          param: null,
          code: status === 404 ? 'not_found' : 'method_not_allowed',
        },
      });
      if (status === 405) expect(response.headers.get('allow')).not.toBeNull();
    }
    expect(session.requests).toHaveLength(0);
  });

  it('answers a disallowed model with 403 model_not_allowed and forwards an allowed one', async () => {
    const session = fixture.models.createSession([{ text: 'Hi.' }]);
    const server = await fixture.proxyTo(session, { allowedModels: ['gpt-allowed'] });

    const refused = await postChat(server, chatBody({ model: 'gpt-expensive' }));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: {
        message: expect.stringContaining('gpt-expensive'),
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_allowed',
      },
    });
    const missing = await postChat(server, { messages: [{ role: 'user', content: 'Hi' }] });
    expect(missing.status).toBe(403);
    expect(session.requests).toHaveLength(0);

    const allowed = await postChat(server, chatBody());
    expect(allowed.status).toBe(200);
    expect(bodyOf(session.requests[0]).model).toBe('gpt-allowed');
  });

  it('answers a POST body that is not a JSON object with 400 invalid_json', async () => {
    const session = fixture.models.createSession([]);
    const server = await fixture.proxyTo(session);

    for (const body of ['{"model": ', '[1, 2]', 'null']) {
      const response = await postChat(server, body);
      expect(response.status, body).toBe(400);
      expect(await response.json()).toMatchObject({
        error: { type: 'invalid_request_error', code: 'invalid_json' },
      });
    }
    expect(session.requests).toHaveLength(0);
  });

  it("forwards the server's key in place of the page's Authorization, and never the page's cookie or organization", async () => {
    const session = fixture.models.createSession([{ text: 'Hi.' }]);
    const server = await fixture.proxyTo(session);

    const response = await postChat(server, chatBody(), {
      authorization: 'Bearer page-token',
      cookie: 'session=page-secret',
      'openai-organization': 'org-chosen-by-page',
      'x-stainless-os': 'Linux',
      'x-stainless-retry-count': '0',
      'x-forwarded-for': '203.0.113.9',
      'content-type': 'text/plain',
    });
    expect(response.status).toBe(200);
    const text = await response.text();

    const seen = session.requests[0]?.headers ?? {};
    expect(seen.authorization).toBe(`Bearer ${KEY}`);
    expect(seen.cookie).toBeUndefined();
    expect(seen['openai-organization']).toBeUndefined();
    expect(seen['x-forwarded-for']).toBeUndefined();
    expect(seen['content-type']).toBe('application/json');
    expect(seen['x-stainless-os']).toBe('Linux');
    expect(seen['x-stainless-retry-count']).toBe('0');
    // And nothing sent back carries the key.
    expect(text).not.toContain(KEY);
    for (const [, value] of response.headers) expect(value).not.toContain(KEY);
  });

  it('sends configured upstream headers, which the page cannot choose', async () => {
    const session = fixture.models.createSession([{ text: 'Hi.' }]);
    const server = await fixture.proxyTo(session, {
      upstreamHeaders: { 'OpenAI-Organization': 'org-server' },
    });

    await postChat(server, chatBody(), { 'openai-organization': 'org-chosen-by-page' });
    expect(session.requests[0]?.headers['openai-organization']).toBe('org-server');
  });

  it('answers a CORS preflight from an allowed origin with 204, echoing the headers the SDK asks for', async () => {
    const session = fixture.models.createSession([]);
    const server = await fixture.proxyTo(session, { allowedOrigins: [APP_ORIGIN] });
    const requested = 'authorization, content-type, x-stainless-os, x-stainless-retry-count';

    const preflight = (origin: string): Promise<Response> =>
      fetch(`${server.url}/llm/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': requested,
        },
      });

    const allowed = await preflight(APP_ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(allowed.headers.get('access-control-allow-headers')).toBe(requested);
    expect(allowed.headers.get('access-control-allow-methods')).toBe('GET, POST, OPTIONS');
    expect(Number(allowed.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(allowed.headers.get('vary')).toMatch(/\bOrigin\b/);

    const refused = await preflight('https://evil.example');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(refused.headers.get('access-control-allow-headers')).toBeNull();
    expect(session.requests).toHaveLength(0);
  });

  it('lets an allowed origin read the response and its retry headers, and refuses an unlisted one before the upstream', async () => {
    const session = fixture.models.createSession([{ text: 'Hi.' }]);
    const server = await fixture.proxyTo(session, { allowedOrigins: [APP_ORIGIN] });

    const allowed = await postChat(server, chatBody(), { origin: APP_ORIGIN });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(allowed.headers.get('access-control-expose-headers')).toContain('x-request-id');
    await allowed.text();

    // A "simple" text/plain POST needs no preflight; refusing it keeps other sites off the key.
    const foreign = await postChat(server, chatBody(), {
      origin: 'https://evil.example',
      'content-type': 'text/plain',
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect(await foreign.json()).toMatchObject({ error: { code: 'origin_not_allowed' } });
    expect(session.requests).toHaveLength(1);
  });

  it('serves same-origin pages with no CORS configured, and no cross-origin ones', async () => {
    const session = fixture.models.createSession([{ text: 'Hi.' }, { text: 'Hi again.' }]);
    const server = await fixture.proxyTo(session);

    const byFetchMetadata = await postChat(server, chatBody(), {
      origin: 'https://public.example',
      'sec-fetch-site': 'same-origin',
    });
    expect(byFetchMetadata.status).toBe(200);
    expect(byFetchMetadata.headers.get('access-control-allow-origin')).toBeNull();
    await byFetchMetadata.text();
    const byHost = await postChat(server, chatBody(), { origin: server.url });
    expect(byHost.status).toBe(200);
    await byHost.text();

    const crossSite = await postChat(server, chatBody(), {
      origin: 'https://app.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(crossSite.status).toBe(403);
    expect(session.requests).toHaveLength(2);
  });

  it('caps max_tokens above maxTokens and sets a cap when the request has none', async () => {
    const session = fixture.models.createSession([{ text: 'a' }, { text: 'b' }, { text: 'c' }]);
    const server = await fixture.proxyTo(session, { maxTokens: 100 });

    await (await postChat(server, chatBody({ max_tokens: 5000 }))).text();
    await (await postChat(server, chatBody())).text();
    await (await postChat(server, chatBody({ max_completion_tokens: 40 }))).text();

    expect(bodyOf(session.requests[0]).max_tokens).toBe(100);
    expect(bodyOf(session.requests[1]).max_completion_tokens).toBe(100);
    expect(bodyOf(session.requests[1]).max_tokens).toBeUndefined();
    expect(bodyOf(session.requests[2]).max_completion_tokens).toBe(40);
  });

  it('answers 502 in OpenAI error shape when the upstream cannot be reached', async () => {
    const port = await unusedPort();
    const proxy = await fixture.serveProxy({ upstream: `http://127.0.0.1:${port}/v1` });

    const response = await postChat(proxy, chatBody());
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: {
        message: expect.stringContaining('ECONNREFUSED'),
        type: 'server_error',
        param: null,
        code: 'upstream_unreachable',
      },
    });
    expect(text).not.toContain(KEY);
  });

  it('answers 413 for a body over maxBodyBytes, declared or streamed, without calling the upstream', async () => {
    const session = fixture.models.createSession([]);
    const server = await fixture.proxyTo(session, { maxBodyBytes: 1024 });
    const big = chatBody({ messages: [{ role: 'user', content: 'x'.repeat(2000) }] });

    const response = await postChat(server, big);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'body_too_large' } });

    // A chunked upload declares no length; the limit still holds while reading.
    const handler = createProxyHandler(
      testProxyOptions({ upstream: session.baseURL, apiKey: KEY, maxBodyBytes: 1024 }),
    );
    const chunk = new TextEncoder().encode('x'.repeat(600));
    const streamed = await handler(
      new Request('http://proxy.test/llm/v1/chat/completions', {
        method: 'POST',
        body: new ReadableStream<Uint8Array>({
          pull(controller) {
            controller.enqueue(chunk);
          },
        }),
        duplex: 'half',
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    expect(session.requests).toHaveLength(0);
  });

  it('answers a refused upload while the client is still sending it, and the keep-alive connection stays usable', async () => {
    const session = fixture.models.createSession([]);
    const server = await fixture.proxyTo(session, {
      maxBodyBytes: 64 * 1024,
      paths: ['chat/completions', 'models'],
    });
    // One socket: each request must wait for the one before it to be fully done.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const large = JSON.stringify(chatBody({ padding: 'x'.repeat(1_000_000) }));
      expect(await send(agent, `${server.url}/llm/v1/files`, 'POST', large)).toBe(404);
      expect(await send(agent, `${server.url}/llm/v1/chat/completions`, 'POST', large)).toBe(413);
      expect(await send(agent, `${server.url}/llm/v1/models`, 'GET')).toBe(200);
    } finally {
      agent.destroy();
    }
    expect(session.requests.map((recorded) => recorded.method)).toEqual(['GET']);
  });

  it("turns the upstream's 401 into a 502 of its own, and relays no upstream error body, key or not", async () => {
    const session = fixture.models.createSession([
      {
        status: 401,
        message: `Incorrect API key provided: ${KEY.slice(0, 8)}****${KEY.slice(-4)}`,
      },
      { status: 400, message: `Echoing your header: Bearer ${KEY}` },
    ]);
    const server = await fixture.proxyTo(session);

    const unauthorized = await postChat(server, chatBody());
    expect(unauthorized.status).toBe(502);
    const unauthorizedText = await unauthorized.text();
    expect(JSON.parse(unauthorizedText)).toMatchObject({ error: { code: 'upstream_auth_failed' } });
    expect(unauthorizedText).not.toContain(KEY.slice(-4));

    const badRequest = await postChat(server, chatBody());
    expect(badRequest.status).toBe(400);
    const badRequestText = await badRequest.text();
    expect(JSON.parse(badRequestText)).toMatchObject({ error: { code: 'upstream_error' } });
    expect(badRequestText).not.toContain('Echoing');
    expect(badRequestText).not.toContain(KEY);
  });
});
