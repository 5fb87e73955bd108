import { describe, expect, it } from 'vitest';
import type { ChatModel, ModelStreamPart, RateLimitWait } from '../../../src/model/chat-model';
import { withRateLimit } from '../../../src/model/rate-limited-model';
import { RateLimiter } from '../../../src/model/rate-limiter';
import { ManualTimers } from '../timing/manual-timers';

/** A model that counts its calls and answers at once. */
function countingModel() {
  const calls = { count: 0 };
  const model: ChatModel = {
    name: 'counting',
    async *stream() {
      calls.count++;
      yield { type: 'text-delta', delta: 'ok' } satisfies ModelStreamPart;
      yield { type: 'finish', finishReason: 'stop' } satisfies ModelStreamPart;
    },
    async complete() {
      calls.count++;
      return { text: 'ok', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } };
    },
  };
  return { model, calls };
}

async function drain(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const all: ModelStreamPart[] = [];
  for await (const part of parts) all.push(part);
  return all;
}

const request = { messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };

describe('a rate-limited model', () => {
  it('reports the wait, waits it out on the clock, then calls the model', async () => {
    const timers = new ManualTimers();
    const { model, calls } = countingModel();
    const limited = withRateLimit(
      model,
      new RateLimiter({ requestsPerMinute: 600, requestBurst: 1 }, () => timers.now()),
      { timers },
    );
    const waits: RateLimitWait[] = [];
    const options = {
      signal: new AbortController().signal,
      idleTimeoutMs: 1000,
      onRateLimitWait: (wait: RateLimitWait) => {
        waits.push(wait);
      },
    };

    await drain(limited.stream(request, options));
    const second = drain(limited.stream(request, options));
    await timers.advance(99);
    expect(calls.count).toBe(1);
    await timers.advance(1);
    const parts = await second;

    expect(waits).toEqual([{ waitMs: 100, limit: 'requests' }]);
    expect(parts.map((part) => part.type)).toEqual(['text-delta', 'finish']);
    expect(calls.count).toBe(2);
  });

  it('ends at once without calling the model when aborted while waiting, and gives its turn back', async () => {
    const { model, calls } = countingModel();
    const limiter = new RateLimiter({ requestsPerMinute: 60, requestBurst: 1 });
    const limited = withRateLimit(model, limiter);
    const controller = new AbortController();
    await drain(limited.stream(request, { signal: controller.signal, idleTimeoutMs: 1000 }));

    const waiting = drain(
      limited.stream(request, {
        signal: controller.signal,
        idleTimeoutMs: 1000,
        onRateLimitWait: () => controller.abort(),
      }),
    );
    const parts = await waiting;

    expect(parts).toEqual([]);
    expect(calls.count).toBe(1);
    // The cancelled reservation was given back: the next caller waits one slot, not two.
    expect(limiter.reserve(0).waitMs).toBeLessThanOrEqual(1000);
  });
});
