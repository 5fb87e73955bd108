import { tool } from 'airlock';
import { describe, expect, it } from 'vitest';
import { server } from 'vitest/browser';
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
    const first = arrived[0] ?? 0;
    // Two go at once; from then on one every 500 ms, as the server sees them: a little slack
    // for the local round trip. Firefox's and WebKit's network processes delay a request's
    // arrival by 30–130 ms at times (Chromium's by a few), so they get more; the limiter's
    // own clock is checked exactly through the waits it reports, below.
    const slack = server.browser === 'chromium' ? 25 : 150;
    for (let index = 2; index < arrived.length; index++) {
      expect((arrived[index] ?? 0) - first).toBeGreaterThanOrEqual((index - 1) * 500 - slack);
      if (index > 2) {
        expect((arrived[index] ?? 0) - (arrived[index - 1] ?? 0)).toBeGreaterThanOrEqual(
          500 - slack,
        );
      }
    }
    expect((arrived[5] ?? 0) - first).toBeLessThan(2_000 + 400);
    const waits = events.flatMap((event) => (event.type === 'rate-limit-wait' ? [event] : []));
    expect(waits.map((event) => [event.step, event.limit])).toEqual([
      [3, 'requests'],
      [4, 'requests'],
      [5, 'requests'],
      [6, 'requests'],
    ]);
    for (const wait of waits) {
      expect(wait.waitMs).toBeGreaterThan(300);
      expect(wait.waitMs).toBeLessThanOrEqual(500);
    }
  });

  it('makes runs of other conversations wait their turn, and an abort ends a waiting run at once without a request', async () => {
    const session = await scriptModel([{ text: 'First.' }, { text: 'Never sent.' }]);
    const agent = agentFor(session, {
      rateLimit: { requestsPerMinute: 60, requestBurst: 1 },
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

    expect(waitMs).toBeGreaterThan(800);
    expect(result.reason).toBe('aborted');
    expect(endedAfter).toBeLessThan(100);
    expect((await first.result).text).toBe('First.');
    // Past the moment its turn would have come: the aborted run never sent its request.
    await new Promise((resolve) => setTimeout(resolve, waitMs + 100));
    expect(await session.requests()).toHaveLength(1);
  });
});
