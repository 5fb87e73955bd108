import { tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, scriptModel } from './support';

const lookup = tool({
  name: 'lookup',
  description: 'Looks something up.',
  parameters: z.object({ query: z.string() }),
  execute: ({ query }) => `found ${query}`,
});

describe('the rate limit', () => {
  it('spaces six model calls at two per second, after a burst of two, and reports each wait', async () => {
    const session = await scriptModel([
      ...Array.from({ length: 5 }, (_, index) => ({
        toolCalls: [{ name: 'lookup', arguments: { query: `q${index}` } }],
      })),
      { text: 'Found everything.' },
    ]);
    const agent = agentFor(session, {
      tools: [lookup],
      rateLimit: { requestsPerMinute: 120 },
      memory: { tools: false },
    });

    const run = agent.run('Look up five things');
    const events = await collect(run);
    const result = await run.result;

    expect(result.reason).toBe('stop');
    const arrived = (await session.requests()).map((request) => request.receivedAt);
    expect(arrived).toHaveLength(6);
    // The exact spacing (two at once, then one every 500 ms) is unit-tested on a manual clock
    // (test/unit/model). Here: the limiter held the real calls back. Six calls with a burst
    // of two cannot all go out in under 4 × 500 ms of refill; a busy machine only adds time,
    // and the margin is for the first request's own trip to the server.
    expect((arrived[5] ?? 0) - (arrived[0] ?? 0)).toBeGreaterThanOrEqual(4 * 500 - 150);
    const waits = events.flatMap((event) => (event.type === 'rate-limit-wait' ? [event] : []));
    // A step slower than the refill (a loaded machine) has nothing to wait for, so not every
    // step past the burst need report one; those that do are past the burst and within a slot.
    expect(waits.length).toBeGreaterThan(0);
    for (const wait of waits) {
      expect(wait.step).toBeGreaterThanOrEqual(3);
      expect(wait.limit).toBe('requests');
      expect(wait.waitMs).toBeGreaterThan(0);
      expect(wait.waitMs).toBeLessThanOrEqual(500);
    }
  });

  it('makes runs of other conversations wait their turn, and an abort ends a waiting run at once without a request', async () => {
    const session = await scriptModel([{ text: 'First.' }, { text: 'Never sent.' }]);
    const agent = agentFor(session, {
      // One call every 3 s: the second run's wait is long beside any delay of a busy machine.
      rateLimit: { requestsPerMinute: 20, requestBurst: 1 },
      memory: { tools: false },
    });

    const first = agent.run('One', { conversationId: `a-${crypto.randomUUID()}` });
    const second = agent.run('Two', { conversationId: `b-${crypto.randomUUID()}` });
    const firstDone = collect(first);
    let abortedAt = 0;
    let waitMs = 0;
    for await (const event of second) {
      if (event.type === 'rate-limit-wait') {
        waitMs = event.waitMs;
        abortedAt = performance.now();
        second.abort();
      }
    }
    const result = await second.result;
    const endedAfter = performance.now() - abortedAt;
    await firstDone;

    expect(waitMs).toBeGreaterThan(1_500);
    expect(result.reason).toBe('aborted');
    // Well before its turn would have come: the abort ended the wait, not the limiter.
    expect(endedAfter).toBeLessThan(waitMs / 2);
    expect((await first.result).text).toBe('First.');
    // Past the moment its turn would have come: the aborted run never sent its request.
    await new Promise((resolve) => setTimeout(resolve, waitMs + 100));
    expect(await session.requests()).toHaveLength(1);
  });
});
