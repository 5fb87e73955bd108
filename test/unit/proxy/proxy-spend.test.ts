import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { createOpenAIChatModel } from '../../../src/model/openai-chat-model';
import {
  type Authorize,
  type CounterStore,
  createMemoryCounterStore,
  createProxyHandler,
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
  it('refuses a user past requestsPerMinute with a 429 whose Retry-After runs to when the sliding minute lets one through, other users unaffected', async () => {
    const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
    const clock = manualClock();
    const server = await proxyTo(session, { now: clock.now, limits: { requestsPerMinute: 2 } });

    for (const _ of [1, 2]) await (await post(server, 'ada')).text();
    const refused = await post(server, 'ada');
    expect(refused.status).toBe(429);
    // Both requests stay counted until the minute ends, then fade with the next one's start.
    expect(refused.headers.get('retry-after')).toBe('31');
    expect(refused.headers.get('retry-after-ms')).toBe('30001');
    // The page's SDK may retry a per-minute limit by itself, after the wait.
    expect(refused.headers.get('x-should-retry')).toBeNull();
    expect(await refused.json()).toMatchObject({
      error: { code: 'rate_limited', param: 'requestsPerMinute' },
    });

    const other = await post(server, 'bob');
    expect(other.status).toBe(200);
    await other.text();

    clock.advance(30_001);
    const nextMinute = await post(server, 'ada');
    expect(nextMinute.status).toBe(200);
    await nextMinute.text();
    expect(session.requests).toHaveLength(4);
  });

  it('lets no double burst through at the edge of a minute: the previous minute still counts, fading', async () => {
    const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
    const clock = manualClock(MINUTE + 59_900);
    const server = await proxyTo(session, { now: clock.now, limits: { requestsPerMinute: 10 } });
    const burst = async (): Promise<number[]> =>
      Promise.all(
        Array.from({ length: 10 }, async () => {
          const response = await post(server, 'ada');
          await response.text();
          return response.status;
        }),
      );
    expect((await burst()).filter((status) => status === 200)).toHaveLength(10);
    // 200 ms later, in the next minute: fixed windows would let ten more through.
    clock.advance(200);
    expect((await burst()).filter((status) => status === 200)).toHaveLength(1);
    // Half a minute on, half the previous minute still counts (5) with this one's (1): four
    // more fit under 10, and a fifth passes it by its one reservation.
    clock.advance(30_000);
    expect((await burst()).filter((status) => status === 200)).toHaveLength(5);
    expect(session.requests).toHaveLength(16);
  }, 30_000);

  it('counts the tokens the upstream reports in the streamed usage, which it asks for and hides from a page that did not', async () => {
    const session = fixture.models.createSession(() => ({
      text: 'Hi there.',
      usage: { prompt_tokens: 40, completion_tokens: 20 },
    }));
    const store = createMemoryCounterStore();
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
    await expect.poll(() => store.value(`airlock:tokens:ada:${MINUTE}`)).toBe(120);

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
    const store = createMemoryCounterStore();
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
    await expect
      .poll(() => store.value(`airlock:tokens:ada:${MINUTE}`))
      .toBeGreaterThanOrEqual(500);
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

  it('reserves the worst case and settles what was used through a pluggable async store, the way a shared Redis would', async () => {
    const session = fixture.models.createSession(() => ({
      text: 'Hi.',
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    }));
    const memory = createMemoryCounterStore();
    const calls: string[] = [];
    const remote: CounterStore = {
      async reserve(claim) {
        calls.push(`reserve ${claim.windows.map((w) => `${w.key}+${w.amount}`).join(' ')}`);
        return memory.reserve(claim);
      },
      async settle(reservation, used) {
        calls.push(`settle ${reservation.keys.join(' ')} = ${used.join(' ')}`);
        return memory.settle(reservation, used);
      },
    };
    const server = await proxyTo(session, {
      now: () => NOON,
      counterStore: remote,
      maxTokens: 500,
      limits: { requestsPerMinute: 10, tokensPerMinute: 1000, concurrentRequests: 2 },
    });
    await (await post(server, 'ada')).text();
    await expect.poll(() => calls.length).toBe(2);
    // One request and its worst case reserved: the estimated input (9 tokens) + the output cap.
    expect(calls).toEqual([
      'reserve airlock:requests:ada+1 airlock:tokens:ada+509',
      `settle airlock:requests:ada:${MINUTE} airlock:tokens:ada:${MINUTE} = 1 7`,
    ]);
    expect(memory.value(`airlock:tokens:ada:${MINUTE}`)).toBe(7);
    expect(memory.inFlight('airlock:inflight:ada')).toBe(0);
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
      retryAfterMs: 30_001,
    });
    expect(session.requests).toHaveLength(1);
  });
});

describe('a burst of concurrent requests', () => {
  /** The issue's numbers: each answer reports about 100 000 tokens. */
  const HUGE_USAGE = { prompt_tokens: 60_000, completion_tokens: 40_000 };
  const PRICES = { 'gpt-allowed': { promptPerMillion: 0.15, completionPerMillion: 0.6 } };
  /** What each request reserves: its input estimated (9 tokens) and its output cap. */
  const RESERVED = { inputTokens: 9, outputTokens: 1000 };

  async function burst(server: ProxyServer, size: number): Promise<number[]> {
    return Promise.all(
      Array.from({ length: size }, async () => {
        const response = await post(server, 'ada');
        await response.text();
        return response.status;
      }),
    );
  }

  it.each([
    {
      limits: { tokensPerMinute: 10_000 },
      // Reserved while under 10 000: ten reservations of 1 009 tokens (the tenth passes it).
      allowed: Math.floor(10_000 / (RESERVED.inputTokens + RESERVED.outputTokens)) + 1,
    },
    {
      limits: { costPerDay: 0.01 },
      allowed:
        Math.floor(
          0.01 / ((RESERVED.inputTokens * 0.15 + RESERVED.outputTokens * 0.6) / 1_000_000),
        ) + 1,
    },
    {
      limits: { tokensPerMinute: 10_000, costPerDay: 0.01 },
      allowed: Math.floor(10_000 / (RESERVED.inputTokens + RESERVED.outputTokens)) + 1,
    },
  ])(
    'forwards at most what $limits allows plus one reservation of 60 requests sent at once',
    async ({ limits, allowed }) => {
      const session = fixture.models.createSession(() => ({ text: 'Hi.', usage: HUGE_USAGE }));
      const store = createMemoryCounterStore();
      const server = await proxyTo(session, {
        now: () => NOON,
        counterStore: store,
        maxTokens: RESERVED.outputTokens,
        prices: PRICES,
        limits: { requestsPerMinute: 1000, ...limits },
      });
      const statuses = await burst(server, 60);
      const forwarded = statuses.filter((status) => status === 200).length;
      expect(forwarded).toBeGreaterThan(0);
      expect(forwarded).toBeLessThanOrEqual(allowed);
      expect(session.requests).toHaveLength(forwarded);
      expect(statuses.filter((status) => status === 429)).toHaveLength(60 - forwarded);
      // Each answer settles at the 100 000 tokens it reported, so the next one is refused.
      await expect.poll(() => store.value(`airlock:requests:ada:${MINUTE}`)).toBe(forwarded);
      const after = await post(server, 'ada');
      expect(after.status).toBe(429);
      await after.text();
      expect(session.requests).toHaveLength(forwarded);
    },
    // Sixty requests at once on a busy shared machine: time is not what this test is about.
    30_000,
  );

  it('holds a user to concurrentRequests in flight, refused with 429 rate_limited, and frees a slot as each answer ends', async () => {
    const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const store = createMemoryCounterStore();
    const server = await proxyTo(session, {
      now: () => NOON,
      counterStore: store,
      limits: { concurrentRequests: 3 },
      // The upstream answers only once the test says so, so the first three stay in flight.
      fetch: async (input, init) => {
        await held;
        return fetch(input, init);
      },
    });
    const first = Array.from({ length: 3 }, () => post(server, 'ada'));
    await expect.poll(() => store.inFlight('airlock:inflight:ada')).toBe(3);
    const refused = await Promise.all(Array.from({ length: 5 }, () => post(server, 'ada')));
    for (const response of refused) {
      expect(response.status).toBe(429);
      expect(await response.json()).toMatchObject({
        error: { code: 'rate_limited', param: 'concurrentRequests' },
      });
    }
    // Another user has slots of their own.
    const bob = post(server, 'bob');
    release();
    for (const response of [...(await Promise.all(first)), await bob]) {
      expect(response.status).toBe(200);
      await response.text();
    }
    await expect.poll(() => store.inFlight('airlock:inflight:ada')).toBe(0);
    const later = await post(server, 'ada');
    expect(later.status).toBe(200);
    await later.text();
    expect(session.requests).toHaveLength(5);
  });

  it('frees the in-flight slot of a request the upstream refused or never answered', async () => {
    const store = createMemoryCounterStore();
    let calls = 0;
    const server = await fixture.serveProxy({
      upstream: 'https://upstream.test/v1',
      authorize: byHeader,
      now: () => NOON,
      counterStore: store,
      limits: { concurrentRequests: 1 },
      fetch: async () => {
        calls += 1;
        if (calls === 1) throw new TypeError('fetch failed');
        return Response.json({ error: { message: 'no' } }, { status: 500 });
      },
    });
    const unreachable = await post(server, 'ada');
    expect(unreachable.status).toBe(502);
    await unreachable.text();
    // Reached only because the first request's slot was freed: the upstream's 500, relayed as 502.
    const refused = await post(server, 'ada');
    expect(refused.status).toBe(502);
    await refused.text();
    expect(store.inFlight('airlock:inflight:ada')).toBe(0);
    expect(calls).toBe(2);
  });
});

describe('a counter store that fails', () => {
  it.each([
    [
      'a refusal of a claim it was not asked',
      { kind: 'refused', index: 7, current: 0, previous: 0 },
    ],
    ['an answer of an unknown kind', { kind: 'maybe' }],
  ])(
    'refuses the request with 503 limits_unavailable when the store answers %s',
    async (_name, outcome) => {
      const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
      const server = await proxyTo(session, {
        logger: () => undefined,
        counterStore: {
          reserve: () => outcome as never,
          settle: () => undefined,
        },
      });
      const response = await post(server, 'ada');
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ error: { code: 'limits_unavailable' } });
      expect(session.requests).toHaveLength(0);
    },
  );

  it('refuses the request with 503 limits_unavailable and logs it, rather than lifting the limits', async () => {
    const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
    const logs: string[] = [];
    const server = await proxyTo(session, {
      logger: (message) => logs.push(message),
      counterStore: {
        reserve: () => Promise.reject(new Error('ECONNRESET to redis')),
        settle: () => Promise.reject(new Error('ECONNRESET to redis')),
      },
    });
    const response = await post(server, 'ada');
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ error: { code: 'limits_unavailable' } });
    expect(session.requests).toHaveLength(0);
    expect(logs.join('\n')).toMatch(/counter store failed \(Error\)/);
  });
});

describe('the limits option', () => {
  it.each([
    { concurrentRequests: -1 },
    { concurrentRequests: 2.5 },
    { concurrentRequests: '4' },
    { concurrentRequests: Number.NaN },
    { requestsPerHour: 5 },
  ])('refuses %o at creation with invalid-options', (limits) => {
    const thrown = (() => {
      try {
        createProxyHandler({
          upstream: 'https://upstream.test/v1',
          apiKey: KEY,
          allowAnonymous: true,
          logger: () => undefined,
          limits: limits as never,
        });
      } catch (error) {
        return error;
      }
    })();
    expect(isAirlockError(thrown, 'invalid-options')).toBe(true);
  });
});
