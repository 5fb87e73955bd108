import { describe, expect, it } from 'vitest';
import type {
  ChatModel,
  ModelCallOptions,
  ModelRequest,
  ModelStreamPart,
} from '../../../src/model/chat-model';
import { confirmedFirstCall } from '../../../src/worker/run/confirmed-call';

/** A model that records each request and its signal, and answers with `words` as text deltas. */
function recordingModel(words: readonly string[]) {
  const calls: { request: ModelRequest; signal: AbortSignal }[] = [];
  const model: ChatModel = {
    name: 'recording',
    complete: async () => ({
      text: '',
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    }),
    async *stream(request, options) {
      calls.push({ request, signal: options.signal });
      for (const word of words) {
        // Each part waits a turn, as a network read would; an abort ends the response.
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (options.signal.aborted) throw options.signal.reason;
        yield { type: 'text-delta', delta: `${word}@${calls.length}` };
      }
    },
  };
  return { model, calls };
}

const request = (content: string): ModelRequest => ({
  messages: [{ role: 'user', content }],
  tools: [],
});

function options(signal = new AbortController().signal): ModelCallOptions {
  return { signal, idleTimeoutMs: 10_000 };
}

async function drain(parts: AsyncIterable<ModelStreamPart>): Promise<string[]> {
  const seen: string[] = [];
  for await (const part of parts) if (part.type === 'text-delta') seen.push(part.delta);
  return seen;
}

/** A promise and the functions that settle it. */
function later<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe('a first model call sent before its context is confirmed', () => {
  it('sends at once, holds every part until confirmed, then gives them all in order', async () => {
    const { model, calls } = recordingModel(['a', 'b', 'c']);
    const confirm = later<ModelRequest | undefined>();
    const parts = confirmedFirstCall(model, confirm.promise).stream(request('hi'), options());
    const seen: string[] = [];
    const reading = (async () => {
      for await (const part of parts) if (part.type === 'text-delta') seen.push(part.delta);
    })();

    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(calls).toHaveLength(1);
    expect(seen).toEqual([]);
    confirm.resolve(undefined);
    await reading;

    expect(seen).toEqual(['a@1', 'b@1', 'c@1']);
    expect(calls[0]?.signal.aborted).toBe(false);
  });

  it('cancels the first response and sends the confirmed request instead, giving nothing of the first', async () => {
    const { model, calls } = recordingModel(['a', 'b']);
    const confirm = later<ModelRequest | undefined>();
    const parts = confirmedFirstCall(model, confirm.promise).stream(request('stale'), options());
    const reading = drain(parts);
    await new Promise((resolve) => setTimeout(resolve, 30));

    confirm.resolve(request('fresh'));

    expect(await reading).toEqual(['a@2', 'b@2']);
    expect(calls.map((call) => call.request.messages[0]?.content)).toEqual(['stale', 'fresh']);
    expect(calls[0]?.signal.aborted).toBe(true);
  });

  it('fails with the reason the confirmation failed, and cancels the response', async () => {
    const { model, calls } = recordingModel(['a']);
    const failure = new Error('The input could not be stored.');

    const parts = confirmedFirstCall(model, Promise.reject(failure)).stream(
      request('hi'),
      options(),
    );

    await expect(drain(parts)).rejects.toBe(failure);
    expect(calls[0]?.signal.aborted).toBe(true);
  });

  it("passes the caller's abort on to the response sent", async () => {
    const { model, calls } = recordingModel(['a', 'b']);
    const caller = new AbortController();
    const parts = confirmedFirstCall(model, Promise.resolve(undefined)).stream(
      request('hi'),
      options(caller.signal),
    );
    const reading = drain(parts);
    caller.abort(new Error('stopped'));

    await expect(reading).rejects.toThrow('stopped');
    expect(calls[0]?.signal.aborted).toBe(true);
  });

  it('closes the response when the caller leaves it part-way', async () => {
    const { model, calls } = recordingModel(['a', 'b', 'c']);
    const parts = confirmedFirstCall(model, Promise.resolve(undefined)).stream(
      request('hi'),
      options(),
    );
    for await (const part of parts) {
      expect(part).toEqual({ type: 'text-delta', delta: 'a@1' });
      break;
    }
    expect(calls[0]?.signal.aborted).toBe(true);
  });

  it('leaves every later call as the model makes it, whatever the confirmation', async () => {
    const { model, calls } = recordingModel(['a']);
    const confirmed = confirmedFirstCall(model, Promise.resolve(request('fresh')));
    await drain(confirmed.stream(request('stale'), options()));

    expect(await drain(confirmed.stream(request('second'), options()))).toEqual(['a@3']);
    expect(calls.map((call) => call.request.messages[0]?.content)).toEqual([
      'stale',
      'fresh',
      'second',
    ]);
  });

  it('tells a router’s choice only for the response that is used: held until confirmed, dropped when replaced', async () => {
    const { model: inner } = recordingModel(['a']);
    let routed = 0;
    // A router tells its choice before its first part, as route([...]) does.
    const router: ChatModel = {
      ...inner,
      async *stream(request, callOptions) {
        routed++;
        await callOptions.onRoute?.({ route: `route-${routed}`, passedOver: [] });
        yield* inner.stream(request, callOptions);
      },
    };
    const told: string[] = [];
    const callOptions = {
      ...options(),
      onRoute: (choice: { route: string }) => void told.push(choice.route),
    };

    const confirmed = later<ModelRequest | undefined>();
    const replaced = drain(
      confirmedFirstCall(router, confirmed.promise).stream(request('old'), callOptions),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(told).toEqual([]);
    confirmed.resolve(request('new'));
    await replaced;
    expect(told).toEqual(['route-2']);

    told.length = 0;
    const kept = later<ModelRequest | undefined>();
    const first = drain(
      confirmedFirstCall(router, kept.promise).stream(request('same'), callOptions),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(told).toEqual([]);
    kept.resolve(undefined);
    await first;
    expect(told).toEqual(['route-3']);
  });
});
