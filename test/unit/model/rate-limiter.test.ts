import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/model/rate-limiter';

/** A clock the test moves by hand. */
function manualClock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('the rate limiter', () => {
  it('lets one second of requests go at once, then spaces the rest evenly', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ requestsPerMinute: 120 }, clock.now);

    const waits = Array.from({ length: 6 }, () => limiter.reserve(0).waitMs);

    expect(waits).toEqual([0, 0, 500, 1000, 1500, 2000]);
  });

  it('refills over time, up to its burst and no further', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ requestsPerMinute: 60, requestBurst: 2 }, clock.now);
    limiter.reserve(0);
    limiter.reserve(0);
    clock.advance(60_000);

    const waits = [limiter.reserve(0).waitMs, limiter.reserve(0).waitMs, limiter.reserve(0).waitMs];

    expect(waits).toEqual([0, 0, 1000]);
  });

  it('makes calls wait for tokens, and settles the estimate with the usage reported', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ tokensPerMinute: 6_000 }, clock.now);

    const first = limiter.reserve(1_000);
    // The call really used 6 000 tokens: the next one waits for the whole minute's refill.
    first.settle(6_000);
    const second = limiter.reserve(1_000);

    expect(first.waitMs).toBe(0);
    expect(second).toMatchObject({ waitMs: 10_000, limit: 'tokens' });
  });

  it('gives back what a cancelled reservation took', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ requestsPerMinute: 60 }, clock.now);
    limiter.reserve(0);
    const waiting = limiter.reserve(0);
    waiting.cancel();
    waiting.cancel();

    expect(waiting.waitMs).toBe(1000);
    expect(limiter.reserve(0).waitMs).toBe(1000);
  });
});
