import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type { ChatModel, ModelStreamPart, NetworkWait } from '../../../src/model/chat-model';
import {
  forwardedNetwork,
  type NetworkStatus,
  withNetworkWait,
} from '../../../src/model/network-wait';
import { flush, ManualTimers } from '../timing/manual-timers';

/** A network the test switches, sending `online` events as a browser does (when `silent` is off). */
class FakeNetwork implements NetworkStatus {
  #online = true;
  readonly #listeners = new Set<() => void>();
  silent = false;
  online(): boolean {
    return this.#online;
  }
  onOnline(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  set(online: boolean): void {
    this.#online = online;
    if (online && !this.silent) for (const listener of [...this.#listeners]) listener();
  }
  get listeners(): number {
    return this.#listeners.size;
  }
}

const refused = () =>
  new AirlockError('model-unreachable', 'refused', { details: { timedOut: false } });

/** A model that plays one behaviour per call: answer, or throw before anything streamed. */
function scriptedModel(calls: Array<'answer' | (() => unknown)>) {
  let made = 0;
  const model: ChatModel = {
    name: 'scripted',
    async *stream() {
      const behaviour = calls[made++] ?? 'answer';
      if (behaviour !== 'answer') throw behaviour();
      yield { type: 'text-delta', delta: 'ok' } satisfies ModelStreamPart;
      yield { type: 'finish', finishReason: 'stop' } satisfies ModelStreamPart;
    },
    async complete() {
      return { text: 'ok', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } };
    },
  };
  return { model, made: () => made };
}

async function drain(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const all: ModelStreamPart[] = [];
  for await (const part of parts) all.push(part);
  return all;
}

const request = { messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };

function callOptions(signal = new AbortController().signal) {
  const waits: NetworkWait[] = [];
  return {
    waits,
    options: {
      signal,
      idleTimeoutMs: 1000,
      onNetworkWait: (wait: NetworkWait) => {
        waits.push(wait);
      },
    },
  };
}

describe('a model that waits for the network', () => {
  it('sends nothing while the browser is offline, then calls once it is back online', async () => {
    const timers = new ManualTimers();
    const network = new FakeNetwork();
    const { model, made } = scriptedModel(['answer']);
    const waiting = withNetworkWait(model, { maxWaitMs: 60_000, network, timers });
    network.set(false);
    const { waits, options } = callOptions();

    const parts = drain(waiting.stream(request, options));
    await timers.advance(30_000);
    expect(made()).toBe(0);
    expect(waits).toEqual([{ reason: 'offline', maxWaitMs: 60_000 }]);
    network.set(true);
    expect((await parts).map((part) => part.type)).toEqual(['text-delta', 'finish']);
    expect(made()).toBe(1);
    expect(timers.pending).toBe(0);
    expect(network.listeners).toBe(0);
  });

  it('looks again on its own when no online event comes', async () => {
    const timers = new ManualTimers();
    const network = new FakeNetwork();
    network.silent = true;
    const { model, made } = scriptedModel(['answer']);
    const waiting = withNetworkWait(model, { maxWaitMs: 60_000, network, timers });
    network.set(false);
    const parts = drain(waiting.stream(request, callOptions().options));
    await timers.advance(5_000);
    network.set(true);
    expect(made()).toBe(0);
    await timers.advance(10_000);
    expect((await parts).length).toBe(2);
    expect(made()).toBe(1);
  });

  it('fails model-unreachable past maxWaitMs, having sent nothing', async () => {
    const timers = new ManualTimers();
    const network = new FakeNetwork();
    const { model, made } = scriptedModel([]);
    const waiting = withNetworkWait(model, { maxWaitMs: 20_000, network, timers });
    network.set(false);
    const parts = drain(waiting.stream(request, callOptions().options));
    const failed = expect(parts).rejects.toMatchObject({
      code: 'model-unreachable',
      details: { offline: true, waitedMs: 20_000 },
    });
    await timers.advance(19_999);
    await flush();
    await timers.advance(1);
    await failed;
    expect(made()).toBe(0);
    expect(timers.pending).toBe(0);
  });

  it('ends the wait at once on abort, quietly and without a call', async () => {
    const timers = new ManualTimers();
    const network = new FakeNetwork();
    const { model, made } = scriptedModel([]);
    const waiting = withNetworkWait(model, { maxWaitMs: 60_000, network, timers });
    network.set(false);
    const controller = new AbortController();
    const parts = drain(waiting.stream(request, callOptions(controller.signal).options));
    await timers.advance(1_000);
    controller.abort();
    expect(await parts).toEqual([]);
    expect(made()).toBe(0);
    expect(timers.pending).toBe(0);
    expect(network.listeners).toBe(0);
  });

  it('waits after a refused connection once the endpoint has answered, and calls again', async () => {
    const timers = new ManualTimers();
    const network = new FakeNetwork();
    const { model, made } = scriptedModel(['answer', refused, refused, 'answer']);
    const waiting = withNetworkWait(model, { maxWaitMs: 60_000, network, timers });
    await drain(waiting.stream(request, callOptions().options));
    const { waits, options } = callOptions();

    const parts = drain(waiting.stream(request, options));
    await flush();
    await timers.advance(1_000);
    expect(made()).toBe(3);
    await timers.advance(2_000);
    expect((await parts).length).toBe(2);
    expect(made()).toBe(4);
    expect(waits).toEqual([{ reason: 'unreachable', maxWaitMs: 60_000 }]);
  });

  it('fails at once on a refused connection from an endpoint that never answered (CORS looks the same)', async () => {
    const network = new FakeNetwork();
    const { model, made } = scriptedModel([refused]);
    const waiting = withNetworkWait(model, {
      maxWaitMs: 60_000,
      network,
      timers: new ManualTimers(),
    });
    const { waits, options } = callOptions();
    await expect(drain(waiting.stream(request, options))).rejects.toMatchObject({
      code: 'model-unreachable',
    });
    expect(made()).toBe(1);
    expect(waits).toEqual([]);
  });

  it('waits when a call fails because the browser went offline, even before any answer', async () => {
    const timers = new ManualTimers();
    const network = new FakeNetwork();
    const { model, made } = scriptedModel([
      () => {
        network.set(false);
        return refused();
      },
      'answer',
    ]);
    const waiting = withNetworkWait(model, { maxWaitMs: 60_000, network, timers });
    const { waits, options } = callOptions();
    const parts = drain(waiting.stream(request, options));
    await timers.advance(500);
    network.set(true);
    expect((await parts).length).toBe(2);
    expect(made()).toBe(2);
    expect(waits).toEqual([{ reason: 'offline', maxWaitMs: 60_000 }]);
  });

  it('never waits on HTTP errors, timeouts, or a failure after something streamed', async () => {
    const network = new FakeNetwork();
    const timers = new ManualTimers();
    const http = new AirlockError('model-http-error', '500', { details: { status: 500 } });
    const timedOut = new AirlockError('model-unreachable', 'slow', { details: { timedOut: true } });
    const { model } = scriptedModel(['answer', () => http, () => timedOut]);
    const waiting = withNetworkWait(model, { maxWaitMs: 60_000, network, timers });
    await drain(waiting.stream(request, callOptions().options));
    await expect(drain(waiting.stream(request, callOptions().options))).rejects.toBe(http);
    await expect(drain(waiting.stream(request, callOptions().options))).rejects.toBe(timedOut);

    const cutAfterText: ChatModel = {
      name: 'cut',
      async *stream() {
        yield { type: 'text-delta', delta: 'half' };
        throw refused();
      },
      complete: model.complete,
    };
    const { waits, options } = callOptions();
    const cut = withNetworkWait(cutAfterText, { maxWaitMs: 60_000, network, timers });
    await expect(drain(cut.stream(request, options))).rejects.toMatchObject({
      code: 'model-unreachable',
    });
    expect(waits).toEqual([]);
  });

  it('with maxWaitMs 0 is the model itself', () => {
    const { model } = scriptedModel([]);
    expect(withNetworkWait(model, { maxWaitMs: 0 })).toBe(model);
  });

  it('goes on at once when the page forwards its online event, though the worker heard none (Chromium)', async () => {
    const timers = new ManualTimers();
    const worker = new FakeNetwork();
    worker.silent = true;
    const network = forwardedNetwork(worker);
    const { model, made } = scriptedModel(['answer']);
    const waiting = withNetworkWait(model, { maxWaitMs: 60_000, network, timers });
    worker.set(false);
    const parts = drain(waiting.stream(request, callOptions().options));
    await timers.advance(500);
    worker.set(true);
    await flush();
    expect(made()).toBe(0);

    network.tellOnline();

    // No timer advanced: the forwarded event alone ended the wait.
    expect((await parts).map((part) => part.type)).toEqual(['text-delta', 'finish']);
    expect(made()).toBe(1);
    expect(timers.pending).toBe(0);
    expect(worker.listeners).toBe(0);
  });

  it('keeps waiting when the page says online but the worker is still offline, and forwarded events flooding in change nothing', async () => {
    const timers = new ManualTimers();
    const worker = new FakeNetwork();
    worker.silent = true;
    const network = forwardedNetwork(worker);
    const { model, made } = scriptedModel(['answer']);
    const waiting = withNetworkWait(model, { maxWaitMs: 60_000, network, timers });
    worker.set(false);
    const parts = drain(waiting.stream(request, callOptions().options));
    for (let i = 0; i < 10_000; i++) network.tellOnline();
    await flush();
    expect(made()).toBe(0);
    worker.set(true);
    network.tellOnline();
    expect((await parts).length).toBe(2);
    expect(made()).toBe(1);
  });
});
