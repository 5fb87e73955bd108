import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { createOpenAIChatModel } from '../../../src/model/openai-chat-model';
import {
  type Authorize,
  type CounterStore,
  createMemoryCounterStore,
  type ProxyOptions,
} from '../../../src/proxy';
import type { ModelSession } from '../../../src/testing';
import { chatBody, type ProxyServer, sentinelKey, useProxyFixture } from './support';

const KEY = sentinelKey();
/** 2026-11-30 12:00:30 UTC: thirty seconds into a minute, twelve hours into a day. */
const NOON = Date.UTC(2026, 10, 30, 12, 0, 30);

const fixture = useProxyFixture(KEY);

/** A clock the test moves by hand. */
function manualClock(start = NOON): { now: () => number; advance(ms: number): void } {
  let at = start;
  return { now: () => at, advance: (ms) => (at += ms) };
}

/** The signed-in user named by the `x-user` header (a stand-in for the app's session check). */
const byHeader: Authorize = (request) => ({ userId: request.headers.get('x-user') ?? 'nobody' });

async function proxyTo(
  session: ModelSession,
  options: Partial<ProxyOptions>,
): Promise<ProxyServer> {
  return fixture.serveProxy({ upstream: session.baseURL, authorize: byHeader, ...options });
}

function post(server: ProxyServer, user: string, body = chatBody()): Promise<Response> {
  return fetch(`${server.url}/llm/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user': user },
    body: JSON.stringify(body),
  });
}

/** The start of the minute window holding NOON, as the counter keys name it. */
const MINUTE = Math.floor(NOON / 60_000) * 60_000;

describe('per-user spend limits', () => {
  it('refuses a user past requestsPerMinute with a 429 whose Retry-After runs to the end of the minute, other users unaffected', async () => {
    const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
    const clock = manualClock();
    const server = await proxyTo(session, { now: clock.now, limits: { requestsPerMinute: 2 } });

    for (const _ of [1, 2]) await (await post(server, 'ada')).text();
    const refused = await post(server, 'ada');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.headers.get('retry-after-ms')).toBe('30000');
    // The page's SDK may retry a per-minute limit by itself, after the wait.
    expect(refused.headers.get('x-should-retry')).toBeNull();
    expect(await refused.json()).toMatchObject({
      error: { code: 'rate_limited', param: 'requestsPerMinute' },
    });

    const other = await post(server, 'bob');
    expect(other.status).toBe(200);
    await other.text();

    clock.advance(30_000);
    const nextMinute = await post(server, 'ada');
    expect(nextMinute.status).toBe(200);
    await nextMinute.text();
    expect(session.requests).toHaveLength(4);
  });

  it('counts the tokens the upstream reports in the streamed usage, which it asks for and hides from a page that did not', async () => {
    const session = fixture.models.createSession(() => ({
      text: 'Hi there.',
      usage: { prompt_tokens: 40, completion_tokens: 20 },
    }));
    const store = createMemoryCounterStore({ now: () => NOON });
    const server = await proxyTo(session, {
      now: () => NOON,
      counterStore: store,
      limits: { tokensPerMinute: 100 },
    });

    const first = await post(server, 'ada', chatBody({ stream: true }));
    const firstText = await first.text();
    // The proxy asked for usage upstream; the page did not, so it sees no usage chunk.
    expect(session.requests[0]?.body).toMatchObject({ stream_options: { include_usage: true } });
    expect(firstText).not.toContain('"usage":{');
    expect(firstText).toContain('data: [DONE]');

    // A page that asks for usage sees it.
    const second = await post(
      server,
      'ada',
      chatBody({ stream: true, stream_options: { include_usage: true } }),
    );
    expect(await second.text()).toContain('"prompt_tokens":40');
    // Counted as each stream closes, just after the page has read its end.
    await expect.poll(() => store.get(`airlock:tokens:${MINUTE}:ada`)).toBe(120);

    // 120 tokens counted: past 100, so the next request is refused until the minute ends.
    const third = await post(server, 'ada', chatBody({ stream: true }));
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({
      error: { code: 'rate_limited', param: 'tokensPerMinute' },
    });
    expect(session.requests).toHaveLength(2);
  });

  it('counts a stream cut short by the client at its fallback: the estimated input and the capped output', async () => {
    const session = fixture.models.createSession(() => ({
      text: Array.from({ length: 40 }, (_, index) => `w${index}`).join(' '),
      chunkDelayMs: 20,
    }));
    const store = createMemoryCounterStore({ now: () => NOON });
    const server = await proxyTo(session, { now: () => NOON, counterStore: store, maxTokens: 500 });
    const controller = new AbortController();
    const response = await fetch(`${server.url}/llm/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'ada' },
      body: JSON.stringify(chatBody({ stream: true })),
      signal: controller.signal,
    });
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    await expect.poll(() => store.get(`airlock:tokens:${MINUTE}:ada`)).toBeGreaterThanOrEqual(500);
  });

  it('refuses a user whose cost for the day has reached costPerDay until UTC midnight, with limits authorize gives per user', async () => {
    const session = fixture.models.createSession(() => ({
      text: 'Hi.',
      usage: { prompt_tokens: 1_000_000, completion_tokens: 0 },
    }));
    const clock = manualClock();
    const server = await proxyTo(session, {
      now: clock.now,
      prices: { 'gpt-allowed': { promptPerMillion: 0.5, completionPerMillion: 2 } },
      // Paying users get a larger budget; the rest the default of 1.
      authorize: (request) => {
        const user = request.headers.get('x-user') ?? 'nobody';
        return user === 'paying' ? { userId: user, limits: { costPerDay: 1.5 } } : { userId: user };
      },
      limits: { costPerDay: 1 },
    });

    for (const _ of [1, 2]) {
      const response = await post(server, 'ada');
      expect(response.status).toBe(200);
      await response.text();
    }
    const spent = await post(server, 'ada');
    expect(spent.status).toBe(429);
    // Twelve hours to midnight, less the thirty seconds into the minute.
    expect(Number(spent.headers.get('retry-after'))).toBe(12 * 3600 - 30);
    expect(spent.headers.get('x-should-retry')).toBe('false');
    expect(await spent.json()).toMatchObject({ error: { code: 'budget_exceeded' } });

    for (const _ of [1, 2, 3]) await (await post(server, 'paying')).text();
    const paying = await post(server, 'paying');
    expect(paying.status).toBe(429);
    await paying.text();

    clock.advance(12 * 3600 * 1000);
    const tomorrow = await post(server, 'ada');
    expect(tomorrow.status).toBe(200);
    await tomorrow.text();
  });

  it('counts through a pluggable async store, the way a shared Redis would', async () => {
    const session = fixture.models.createSession(() => ({
      text: 'Hi.',
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    }));
    const counters = new Map<string, number>();
    const calls: string[] = [];
    const redisLike: CounterStore = {
      async add(key, amount, ttlMs) {
        calls.push(`add ${key} ${amount} ${ttlMs}`);
        const value = (counters.get(key) ?? 0) + amount;
        counters.set(key, value);
        return value;
      },
      async get(key) {
        calls.push(`get ${key}`);
        return counters.get(key) ?? 0;
      },
    };
    const server = await proxyTo(session, {
      now: () => NOON,
      counterStore: redisLike,
      limits: { requestsPerMinute: 10, tokensPerMinute: 1000 },
    });
    await (await post(server, 'ada')).text();
    await expect.poll(() => calls.length).toBe(3);
    expect(calls).toEqual([
      `add airlock:requests:${MINUTE}:ada 1 60000`,
      `get airlock:tokens:${MINUTE}:ada`,
      `add airlock:tokens:${MINUTE}:ada 7 60000`,
    ]);
  });

  it("is understood by Airlock's own client: a wait longer than maxRetryAfterMs fails at once with limit-exceeded (the proxy's limit, not the upstream's) and the wait", async () => {
    const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
    const server = await proxyTo(session, {
      now: manualClock().now,
      authorize: () => ({ userId: 'ada' }),
      limits: { requestsPerMinute: 1 },
    });
    const chat = createOpenAIChatModel({
      baseURL: `${server.url}/llm/v1`,
      model: 'gpt-allowed',
      maxRetryAfterMs: 1000,
    });
    const signal = new AbortController().signal;
    const request = { messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };
    expect((await chat.complete(request, { signal })).text).toBe('Hi.');

    const failure = await chat.complete(request, { signal }).catch((error: unknown) => error);
    expect(isAirlockError(failure, 'limit-exceeded')).toBe(true);
    expect((failure as { details: Record<string, unknown> }).details).toMatchObject({
      status: 429,
      proxyCode: 'rate_limited',
      param: 'requestsPerMinute',
      retryAfterMs: 30_000,
    });
    expect(session.requests).toHaveLength(1);
  });
});

describe('a counter store that fails', () => {
  it('refuses the request with 503 limits_unavailable and logs it, rather than lifting the limits', async () => {
    const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
    const logs: string[] = [];
    const server = await proxyTo(session, {
      logger: (message) => logs.push(message),
      counterStore: {
        add: () => Promise.reject(new Error('ECONNRESET to redis')),
        get: () => Promise.reject(new Error('ECONNRESET to redis')),
      },
    });
    const response = await post(server, 'ada');
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ error: { code: 'limits_unavailable' } });
    expect(session.requests).toHaveLength(0);
    expect(logs.join('\n')).toMatch(/counter store failed \(Error\)/);
  });
});
