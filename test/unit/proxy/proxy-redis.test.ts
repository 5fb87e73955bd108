// The Redis counter store against a real `redis-server` (Debian's, installed by
// scripts/redis.mjs when missing), started on 127.0.0.1 on a free port and stopped after:
// atomic reserve/settle, a Redis outage (fail closed, 503), and four proxy processes
// holding one set of limits.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import {
  type Authorize,
  type CounterClaim,
  CounterStoreError,
  createRedisCounterStore,
  type ProxyOptions,
} from '../../../src/proxy';
import type { ModelSession } from '../../../src/testing';
import { useRedis } from '../support/redis';
import { chatBody, type ProxyServer, sentinelKey, TEST_MODEL, useProxyFixture } from './support';

const KEY = sentinelKey();
/** 2026-11-30 12:00:30 UTC: thirty seconds into a minute. */
const NOON = Date.UTC(2026, 10, 30, 12, 0, 30);
const MINUTE = Math.floor(NOON / 60_000) * 60_000;

const fixture = useProxyFixture(KEY);
const redis = useRedis();

const byHeader: Authorize = (request) => ({ userId: request.headers.get('x-user') ?? 'nobody' });

function proxyTo(session: ModelSession, options: Partial<ProxyOptions>): Promise<ProxyServer> {
  return fixture.serveProxy({
    upstream: session.baseURL,
    authorize: byHeader,
    counterStore: createRedisCounterStore({ client: redis.client }),
    ...options,
  });
}

async function post(base: string, user: string): Promise<number> {
  const response = await fetch(`${base}/llm/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user': user },
    body: JSON.stringify(chatBody()),
  });
  await response.text();
  return response.status;
}

function tokensClaim(key: string, amount: number, limit: number, at = NOON): CounterClaim {
  return { at, windows: [{ key, amount, limit, windowMs: 60_000, sliding: true }] };
}

describe('the Redis counter store', () => {
  it('reserves all or nothing in one script: a refused claim adds to none of its counters', async () => {
    const store = createRedisCounterStore({ client: redis.client });
    const claim: CounterClaim = {
      at: NOON,
      windows: [
        { key: 'airlock:requests:atomic', amount: 1, limit: 10, windowMs: 60_000, sliding: true },
        { key: 'airlock:tokens:atomic', amount: 600, limit: 1000, windowMs: 60_000, sliding: true },
      ],
    };
    expect((await store.reserve(claim)).kind).toBe('reserved');
    expect((await store.reserve(claim)).kind).toBe('reserved');
    // 1 200 tokens counted: the third is refused by its second claim, and its first not added.
    expect(await store.reserve(claim)).toEqual({
      kind: 'refused',
      index: 1,
      current: 1200,
      previous: 0,
    });
    expect(await redis.client.get(`airlock:requests:atomic:${MINUTE}`)).toBe('2');
    expect(Number(await redis.client.pTTL(`airlock:tokens:atomic:${MINUTE}`))).toBeGreaterThan(
      60_000,
    );
  });

  it('settles a reservation at what was used, frees its in-flight slot, and counts the previous minute, weighted', async () => {
    const store = createRedisCounterStore({ client: redis.client });
    const inFlight = {
      key: 'airlock:inflight:settle',
      limit: 1,
      id: 'req_1',
      expiresAt: NOON + 600_000,
    };
    const first = await store.reserve({
      ...tokensClaim('airlock:tokens:settle', 900, 1000),
      inFlight,
    });
    if (first.kind !== 'reserved') throw new Error('expected a reservation');
    expect(
      (
        await store.reserve({
          ...tokensClaim('airlock:tokens:settle', 10, 1000),
          inFlight: { ...inFlight, id: 'req_2' },
        })
      ).kind,
    ).toBe('busy');
    await store.settle(first.reservation, [100]);
    expect(Number(await redis.client.get(`airlock:tokens:settle:${MINUTE}`))).toBe(100);
    expect(await redis.client.zCard('airlock:inflight:settle')).toBe(0);
    // Half a minute into the next one, half of those 100 still count.
    const later = await store.reserve(tokensClaim('airlock:tokens:settle', 0, 50, MINUTE + 90_000));
    expect(later).toEqual({ kind: 'refused', index: 0, current: 0, previous: 100 });
  });

  it('keeps users apart whatever their ids hold: colons, braces, Lua and glob characters', async () => {
    const store = createRedisCounterStore({ client: redis.client });
    const users = ['eve', 'eve:1796040000000', "eve'}) redis.call('FLUSHALL') --", 'e*', '{eve}'];
    for (const user of users) {
      const outcome = await store.reserve(tokensClaim(`airlock:tokens:${user}`, 10, 15));
      expect(outcome.kind).toBe('reserved');
    }
    for (const user of users) {
      expect(await redis.client.get(`airlock:tokens:${user}:${MINUTE}`)).toBe('10');
    }
  });

  it('reloads its scripts when Redis has forgotten them (SCRIPT FLUSH, a restart)', async () => {
    const store = createRedisCounterStore({ client: redis.client });
    await store.reserve(tokensClaim('airlock:tokens:flush', 1, 10));
    await redis.client.scriptFlush();
    expect((await store.reserve(tokensClaim('airlock:tokens:flush', 1, 10))).kind).toBe('reserved');
    expect(await redis.client.get(`airlock:tokens:flush:${MINUTE}`)).toBe('2');
  });

  it('refuses a client that is not a node-redis client, and a timeout that is no number', () => {
    for (const bad of [undefined, null, {}, { evalSha: 'no', eval: () => 1 }, 'redis://x']) {
      const thrown = (() => {
        try {
          createRedisCounterStore({ client: bad as never });
        } catch (error) {
          return error;
        }
      })();
      expect(isAirlockError(thrown, 'invalid-options')).toBe(true);
    }
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createRedisCounterStore({ client: redis.client, timeoutMs })).toThrow(
        /timeoutMs/,
      );
    }
  });

  it('fails a call Redis answers with nonsense, or not at all within timeoutMs', async () => {
    const nonsense = createRedisCounterStore({
      client: { evalSha: async () => ['reserved?'], eval: async () => ['reserved?'] },
    });
    await expect(nonsense.reserve(tokensClaim('k', 1, 2))).rejects.toBeInstanceOf(
      CounterStoreError,
    );
    const silent = createRedisCounterStore({
      client: {
        evalSha: () => new Promise(() => undefined),
        eval: () => new Promise(() => undefined),
      },
      timeoutMs: 20,
    });
    await expect(silent.reserve(tokensClaim('k', 1, 2))).rejects.toThrow(/within 20 ms/);
  });
});

describe('the proxy on Redis', () => {
  it('forwards at most the limit plus one reservation of 60 requests sent at once', async () => {
    const session = fixture.models.createSession(() => ({
      text: 'Hi.',
      usage: { prompt_tokens: 60_000, completion_tokens: 40_000 },
    }));
    const server = await proxyTo(session, {
      // A clock that stands still: the burst must not straddle a minute.
      now: () => NOON,
      maxTokens: 1000,
      limits: { requestsPerMinute: 1000, tokensPerMinute: 10_000 },
    });
    const statuses = await Promise.all(Array.from({ length: 60 }, () => post(server.url, 'burst')));
    const forwarded = statuses.filter((status) => status === 200).length;
    // Each reserves 1 009 tokens (9 estimated in, 1 000 out): ten fit under 10 000 (the tenth passes it).
    expect(forwarded).toBeGreaterThan(0);
    expect(forwarded).toBeLessThanOrEqual(10);
    expect(session.requests).toHaveLength(forwarded);
    expect(statuses.filter((status) => status === 429)).toHaveLength(60 - forwarded);
  }, 30_000);

  it('fails closed while Redis is down: 503 limits_unavailable, nothing forwarded, and serves again once it is back', async () => {
    const session = fixture.models.createSession(() => ({ text: 'Hi.' }));
    const logs: string[] = [];
    const server = await proxyTo(session, {
      limits: { requestsPerMinute: 1000 },
      logger: (message) => logs.push(message),
    });
    const load = async (count: number) =>
      Promise.all(Array.from({ length: count }, () => post(server.url, 'outage')));
    expect(new Set(await load(10))).toEqual(new Set([200]));
    // Stopped in the middle of a load: whatever was admitted before is answered, the rest refused.
    const during = load(40);
    await redis.server.stop();
    const statuses = await during;
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    const forwardedBefore = session.requests.length;
    expect(await load(10)).toEqual(Array(10).fill(503));
    expect(session.requests).toHaveLength(forwardedBefore);
    expect(logs.join('\n')).toMatch(/counter store failed/);

    await redis.server.start();
    await expect
      .poll(() => post(server.url, 'outage'), { timeout: 15_000, interval: 100 })
      .toBe(200);
  }, 30_000);
});

describe('four proxy processes on one Redis', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  function startProxyProcess(upstream: string, settings: object): Promise<string> {
    const child = fork(
      fileURLToPath(new URL('../../../bench/proxy/proxy-process.mjs', import.meta.url)),
      [upstream, KEY, JSON.stringify(settings)],
      { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
    );
    children.push(child);
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`A proxy process exited (${code}).`)));
      child.on('message', (message: { type: string; port?: number }) => {
        if (message.type === 'listening') resolve(`http://127.0.0.1:${message.port}`);
      });
    });
  }

  it('hold a burst spread over them to one set of limits', async () => {
    const session = fixture.models.createSession(() => ({
      text: 'Hi.',
      usage: { prompt_tokens: 60_000, completion_tokens: 40_000 },
    }));
    const settings = {
      redisUrl: redis.server.url,
      // Four processes starting on a busy machine: a slow answer is not what this test is about.
      redisTimeoutMs: 20_000,
      // One instant for all four: a burst spread over seconds must not straddle a minute.
      fixedNow: NOON,
      model: TEST_MODEL,
      maxTokens: 1000,
      limits: { requestsPerMinute: 1000, tokensPerMinute: 10_000, concurrentRequests: 1000 },
    };
    const proxies = await Promise.all(
      Array.from({ length: 4 }, () => startProxyProcess(session.baseURL, settings)),
    );
    const statuses = await Promise.all(
      Array.from({ length: 80 }, (_, index) => post(proxies[index % 4] as string, 'spread')),
    );
    const forwarded = statuses.filter((status) => status === 200).length;
    // Each process alone would let ten through (forty in all); together, ten at most.
    expect(forwarded).toBeGreaterThan(0);
    expect(forwarded).toBeLessThanOrEqual(10);
    expect(session.requests).toHaveLength(forwarded);
    expect(statuses.filter((status) => status === 429)).toHaveLength(80 - forwarded);
  }, 120_000);
});
