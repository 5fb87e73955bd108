// @vitest-environment node
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type AirlockError, isAirlockError } from '../../../src/errors/airlock-error';
import { createOpenAIChatModel } from '../../../src/model/openai-chat-model';
import { formatRefusal, type ProxyRefusal } from '../../../src/proxy';
import type { ProxyServer } from './support';
import { sentinelKey, TEST_MODEL, unusedPort, useProxyFixture } from './support';

const KEY = sentinelKey();
const fixture = useProxyFixture(KEY);

/** One call of the agent worker's real chat model through `proxy`; the error it ends with. */
async function failureThrough(
  proxy: ProxyServer,
  options: { model?: string; content?: string; headers?: Record<string, string> } = {},
): Promise<AirlockError> {
  const model = createOpenAIChatModel({
    baseURL: `${proxy.url}/llm/v1`,
    model: options.model ?? TEST_MODEL,
    maxRetries: 0,
    ...(options.headers ? { headers: options.headers } : {}),
  });
  try {
    for await (const _part of model.stream(
      { messages: [{ role: 'user', content: options.content ?? 'Hi' }], tools: [] },
      { signal: new AbortController().signal, idleTimeoutMs: 5_000 },
    )) {
      // Drained: only the failure matters here.
    }
  } catch (error) {
    if (isAirlockError(error)) return error;
    throw error;
  }
  throw new Error('The call succeeded; a failure was expected.');
}

describe("the proxy's refusals reach the model layer as their own codes", () => {
  it('reports a model missing from allowedModels as model-not-allowed with the proxy message, not as a refused key', async () => {
    const session = fixture.models.createSession([{ text: 'never' }]);
    const proxy = await fixture.proxyTo(session);

    const error = await failureThrough(proxy, { model: 'gpt-not-on-the-list' });

    expect(error.code).toBe('model-not-allowed');
    expect(error.message).toContain(
      'The model "gpt-not-on-the-list" is not allowed through this proxy.',
    );
    expect(error.message).not.toMatch(/credential|api key/i);
    expect(error.details).toMatchObject({
      status: 403,
      proxyCode: 'model_not_allowed',
      param: 'model',
    });
    expect(session.requests).toHaveLength(0);
  });

  it('keeps the message of a refusal short and its log line one line when the model name is huge and full of control characters', async () => {
    const refusals: ProxyRefusal[] = [];
    const session = fixture.models.createSession([{ text: 'never' }]);
    const proxy = await fixture.proxyTo(session, {
      onRefusal: (refusal) => refusals.push(refusal),
    });
    const hostile = `gpt\n\u001b[31mforged line${'x'.repeat(200_000)}`;

    const error = await failureThrough(proxy, { model: hostile });

    expect(error.code).toBe('model-not-allowed');
    expect(error.message.length).toBeLessThan(400);
    expect(refusals).toHaveLength(1);
    const line = formatRefusal(refusals[0] as ProxyRefusal);
    expect(line.length).toBeLessThan(600);
    expect(line).not.toContain('\n');
    expect(line).not.toContain('\u001b');
    expect(session.requests).toHaveLength(0);
  });

  it("reports authorize's own 401 as proxy-unauthorized, quoting the app's answer", async () => {
    const session = fixture.models.createSession([{ text: 'never' }]);
    const proxy = await fixture.proxyTo(session, {
      authorize: () => new Response('Your session has expired.', { status: 401 }),
    });

    const error = await failureThrough(proxy);

    expect(error.code).toBe('proxy-unauthorized');
    expect(error.message).toContain('Your session has expired.');
    expect(error.details).toMatchObject({ status: 401, proxyCode: 'authorize_refused' });
  });

  it('reports a per-user rate limit and a size limit as limit-exceeded, with how long to wait', async () => {
    const session = fixture.models.createSession([{ text: 'First.' }, { text: 'never' }]);
    const proxy = await fixture.proxyTo(session, {
      limits: { requestsPerMinute: 1 },
      now: () => 1_000_000,
      maxBodyBytes: 2_000,
    });
    const model = createOpenAIChatModel({
      baseURL: `${proxy.url}/llm/v1`,
      model: TEST_MODEL,
      maxRetries: 0,
    });
    for await (const _part of model.stream(
      { messages: [{ role: 'user', content: 'Hi' }], tools: [] },
      { signal: new AbortController().signal, idleTimeoutMs: 5_000 },
    )) {
      // The one request this minute allows.
    }

    const rate = await failureThrough(proxy);
    const size = await failureThrough(proxy, { content: 'x'.repeat(5_000) });

    expect(rate.code).toBe('limit-exceeded');
    expect(rate.details).toMatchObject({
      status: 429,
      proxyCode: 'rate_limited',
      param: 'requestsPerMinute',
    });
    expect(rate.details?.retryAfterMs).toBeGreaterThan(0);
    expect(size.code).toBe('limit-exceeded');
    expect(size.details).toMatchObject({ status: 413, proxyCode: 'body_too_large' });
  });

  it('reports any other policy refusal as request-refused', async () => {
    const session = fixture.models.createSession([{ text: 'never' }]);
    const proxy = await fixture.proxyTo(session, { paths: ['models'] });

    const error = await failureThrough(proxy);

    expect(error.code).toBe('request-refused');
    expect(error.message).toContain('POST /llm/v1/chat/completions is not served by this proxy.');
    expect(error.details).toMatchObject({ status: 404, proxyCode: 'not_found' });
  });

  it("reports the upstream refusing the server's key as model-auth, naming the proxy and never the key", async () => {
    const session = fixture.models.createSession([
      {
        status: 401,
        message: `Incorrect API key provided: ${KEY.slice(0, 8)}****${KEY.slice(-4)}.`,
      },
    ]);
    const proxy = await fixture.proxyTo(session);

    const error = await failureThrough(proxy);

    expect(error.code).toBe('model-auth');
    expect(error.details).toMatchObject({ status: 502, proxyCode: 'upstream_auth_failed' });
    expect(error.message).toMatch(/proxy/);
    expect(error.message).toMatch(/check the API key configured on the server/);
    expect(error.message).not.toContain(KEY.slice(-4));
  });

  it('keeps an endpoint of its own (no proxy mark) on the status rules: a 401 is model-auth, a 400 model-http-error', async () => {
    const session = fixture.models.createSession([{ status: 401 }, { status: 400 }]);

    const errors = await failuresFrom(session.baseURL, 2);

    expect(errors[0]).toMatchObject({ code: 'model-auth', details: { status: 401 } });
    expect(errors[1]).toMatchObject({ code: 'model-http-error', details: { status: 400 } });
  });

  it('ignores a forged or unknown proxy mark: the status decides, and the value is not passed on', async () => {
    const marks = [
      'model_not_allowed\u0001<script>',
      'x'.repeat(8_000),
      'toString',
      'hasOwnProperty',
    ];
    const statuses = [401, 400, 400, 403];
    let answered = 0;
    const endpoint = createServer((request, response) => {
      request.resume();
      const index = answered++;
      response.writeHead(statuses[index] ?? 500, {
        'content-type': 'application/json',
        'x-airlock-proxy-error': encodeURI(marks[index] ?? ''),
      });
      response.end(
        JSON.stringify({ error: { message: 'no', type: 'x', param: null, code: null } }),
      );
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => endpoint.close(() => resolve())));
    const { port } = endpoint.address() as AddressInfo;

    const errors = await failuresFrom(`http://127.0.0.1:${port}/v1`, 4);

    expect(errors.map((error) => error.code)).toEqual([
      'model-auth',
      'model-http-error',
      'model-http-error',
      'model-auth',
    ]);
    for (const error of errors) expect(error.details).not.toHaveProperty('proxyCode');
  });
});

/** `count` calls of the real chat model against `baseURL`, each expected to fail; their errors. */
async function failuresFrom(baseURL: string, count: number): Promise<AirlockError[]> {
  const model = createOpenAIChatModel({ baseURL, model: 'm', maxRetries: 0 });
  const errors: AirlockError[] = [];
  for (let i = 0; i < count; i++) {
    try {
      for await (const _part of model.stream(
        { messages: [{ role: 'user', content: 'Hi' }], tools: [] },
        { signal: new AbortController().signal, idleTimeoutMs: 5_000 },
      )) {
        // Drained: only the failure matters here.
      }
      throw new Error('The call succeeded; a failure was expected.');
    } catch (error) {
      if (!isAirlockError(error)) throw error;
      errors.push(error);
    }
  }
  return errors;
}

describe('the refusal log', () => {
  it('tells onRefusal of each refusal: who, the route, the code, the status and the message, never the key', async () => {
    const refusals: ProxyRefusal[] = [];
    const session = fixture.models.createSession([{ text: 'never' }]);
    const proxy = await fixture.proxyTo(session, {
      authorize: () => ({ userId: 'alice' }),
      onRefusal: (refusal) => refusals.push(refusal),
    });

    await failureThrough(proxy, { model: 'gpt-not-on-the-list' });

    expect(refusals).toEqual([
      {
        code: 'model_not_allowed',
        status: 403,
        method: 'POST',
        path: '/llm/v1/chat/completions',
        userId: 'alice',
        message: 'The model "gpt-not-on-the-list" is not allowed through this proxy.',
      },
    ]);
    expect(JSON.stringify(refusals)).not.toContain(KEY);
  });

  it('says when the upstream cannot be reached, naming the network error and not its message', async () => {
    const refusals: ProxyRefusal[] = [];
    const proxy = await fixture.serveProxy({
      upstream: `http://127.0.0.1:${await unusedPort()}/v1`,
      onRefusal: (refusal) => refusals.push(refusal),
    });

    const error = await failureThrough(proxy);

    expect(error.code).toBe('model-http-error');
    expect(error.details).toMatchObject({ status: 502, proxyCode: 'upstream_unreachable' });
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({
      code: 'upstream_unreachable',
      status: 502,
      userId: 'anonymous',
      message: 'The model proxy could not reach its upstream (ECONNREFUSED).',
    });
  });

  it('answers all the same when onRefusal throws, and logs that it did', async () => {
    const logged: string[] = [];
    const session = fixture.models.createSession([{ text: 'never' }]);
    const proxy = await fixture.proxyTo(session, {
      logger: (line) => logged.push(line),
      onRefusal: () => {
        throw new RangeError(`a log sink broke, holding ${KEY}`);
      },
    });

    const error = await failureThrough(proxy, { model: 'gpt-not-on-the-list' });

    expect(error.code).toBe('model-not-allowed');
    expect(logged.at(-1)).toBe('Airlock proxy: onRefusal threw (RangeError).');
    expect(logged.join('\n')).not.toContain(KEY);
  });

  it('refuses an onRefusal that is not a function when the proxy is made', async () => {
    await expect(
      fixture.serveProxy({ upstream: 'http://127.0.0.1:9/v1', onRefusal: 'console' as never }),
    ).rejects.toMatchObject({ code: 'invalid-options' });
  });

  it('does not tell onRefusal of a relayed success', async () => {
    const refusals: ProxyRefusal[] = [];
    const session = fixture.models.createSession([{ text: 'Fine.' }]);
    const proxy = await fixture.proxyTo(session, {
      onRefusal: (refusal) => refusals.push(refusal),
    });
    const response = await fetch(`${proxy.url}/llm/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: 'user', content: 'Hi' }] }),
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('x-airlock-proxy-error')).toBeNull();
    await response.text();
    expect(refusals).toEqual([]);
  });
});
