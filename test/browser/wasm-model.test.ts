import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import { createAgent, isAirlockError, tool } from 'airlock-agents';
import {
  type ModelLoadProgress,
  type WasmModel,
  type WasmModelConfig,
  wasmModel,
  wasmModelCache,
} from 'airlock-agents/models';
import {
  type ConformanceScenario,
  chatModelConformance,
  createRemoteSession,
} from 'airlock-agents/testing/remote';
import { afterAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { commands } from 'vitest/browser';
import { z } from 'zod';
import { hasMemory64 as memory64Here } from '../../src/model/wasm-support';
import { collect, WORKER_START_MS } from './support';

// The on-device model (llama.cpp in WebAssembly through wllama) over the tiny GGUF that
// scripts/build-test-model.mjs writes for the run. Its weights are random: what it says is
// gibberish, and the contract's exact texts and calls come from a grammar each case gives it.

const MODEL_URL = new URL('../fixtures/tiny-llama.gguf', import.meta.url).href;
const MISSING_URL = new URL('../fixtures/no-such-model.gguf', import.meta.url).href;

/**
 * wllama's build needs WebAssembly memory64. WebKitGTK 2.50 (the WebKit here) has none, nor
 * JSPI: wllama runs there only from its separate compat build (`@wllama/wllama-compat`, not
 * installed: no network to fetch it from its CDN either). In WebKit the adapter's answer is a
 * typed error, tested below; the cases that need the engine are skipped for that reason.
 */
const hasMemory64 = memory64Here();

const models: WasmModel[] = [];
afterAll(async () => {
  await Promise.all(models.map((model) => model.dispose()));
});

/** A model over the test weights, disposed when the file ends. */
function tiny(config: Partial<WasmModelConfig> = {}): WasmModel {
  const model = wasmModel({ model: MODEL_URL, wasmUrl, cache: false, ...config });
  models.push(model);
  return model;
}

/** A GBNF string literal of `text` (JSON's escapes are GBNF's for this text). */
const literal = (text: string) => JSON.stringify(text);

/** The grammar that makes the random weights do what `scenario` asks, in Airlock's envelope. */
function grammarFor(scenario: ConformanceScenario): string {
  switch (scenario.kind) {
    case 'text':
    case 'slow-text':
      return `root ::= ${literal(JSON.stringify({ text: scenario.text }))}`;
    case 'tool-calls':
      return `root ::= ${literal(JSON.stringify({ tool_calls: scenario.calls }))}`;
    default:
      // `hang`: an answer far longer than the call lives (it is aborted first).
      return 'root ::= "{\\"text\\":\\"" [a-z]{1500} "\\"}"';
  }
}

describe.skipIf(!hasMemory64)('wasmModel keeps the ChatModel contract', () => {
  const cases = chatModelConformance({
    model: (scenario) =>
      scenario.kind === 'failure'
        ? tiny({ model: MISSING_URL })
        : tiny({ grammar: grammarFor(scenario), maxTokens: 2000 }),
    // Each case loads the engine anew on a loaded machine.
    settleWithinMs: 30_000,
  });
  for (const check of cases) it(check.name, check.run, 60_000);
});

describe.skipIf(!hasMemory64)('wasmModel over the tiny self-built model', () => {
  it('streams its own text, ends it with finish and reports usage counted by the tokenizer', async () => {
    const model = tiny();
    const parts = [];
    for await (const part of model.stream(
      { messages: [{ role: 'user', content: 'hi' }], tools: [] },
      { signal: new AbortController().signal, idleTimeoutMs: 30_000 },
    ))
      parts.push(part);

    expect(parts.at(-2)).toMatchObject({ type: 'finish' });
    const usage = parts.at(-1);
    // The default prompt, byte for byte (one token per byte), after the BOS token.
    const prompt = '<|user|>\nhi\n<|assistant|>\n';
    expect(usage).toMatchObject({ type: 'usage', usage: { promptTokens: prompt.length + 1 } });
  });

  it('holds its answer to the tool envelope: a call of an offered tool, arguments fitting its schema', async () => {
    const model = tiny();
    const parts = [];
    for await (const part of model.stream(
      {
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [
          {
            name: 'get_weather',
            description: 'The weather in a city.',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' } },
              required: ['city'],
              additionalProperties: false,
            },
          },
        ],
        options: { seed: 7 },
      },
      { signal: new AbortController().signal, idleTimeoutMs: 30_000 },
    ))
      parts.push(part);

    const deltas = parts.filter((part) => part.type === 'tool-call-delta');
    expect(deltas[0]).toMatchObject({ index: 0, name: 'get_weather', id: expect.any(String) });
    const args = JSON.parse(deltas.map((part) => part.argumentsDelta).join(''));
    expect(Object.keys(args)).toEqual(['city']);
    expect(typeof args.city).toBe('string');
    expect(parts.find((part) => part.type === 'finish')).toMatchObject({
      finishReason: 'tool_calls',
    });
  });

  it('runs llama.cpp on a worker thread of its own, which answers and which dispose() ends', async () => {
    const threads = commands.workerThreads as () => Promise<
      { tid: number; cpuMs: number }[] | null
    >;
    const before = await threads();
    expect(before, 'the test browser’s threads are read from /proc').not.toBeNull();
    const model = wasmModel({
      model: MODEL_URL,
      wasmUrl,
      cache: false,
      grammar: 'root ::= [a-z]{300}',
    });
    await model.load();
    const own = (list: { tid: number; cpuMs: number }[] | null) =>
      (list ?? []).filter((thread) => !before?.some((old) => old.tid === thread.tid));
    const loaded = own(await threads());
    expect(loaded.length).toBeGreaterThanOrEqual(1);

    await model.complete(
      { messages: [{ role: 'user', content: 'Go on.' }], tools: [], options: { max_tokens: 400 } },
      { signal: new AbortController().signal },
    );
    const answered = own(await threads());
    const cpu = (list: { tid: number; cpuMs: number }[]) =>
      list.reduce((sum, thread) => sum + thread.cpuMs, 0);
    // The 300 tokens were computed there, not on the calling (page) thread.
    expect(cpu(answered)).toBeGreaterThan(cpu(loaded));

    await model.dispose();
    await expect
      .poll(
        async () =>
          own(await threads()).filter((thread) => loaded.some((l) => l.tid === thread.tid)),
        {
          timeout: 30_000,
          interval: 200,
        },
      )
      .toEqual([]);
  });

  it('tells its load: checking, downloading to the whole size, loading, ready; cached the second time', async () => {
    await wasmModelCache.clear();
    onTestFinished(() => wasmModelCache.clear());
    const size = (await (await fetch(MODEL_URL)).blob()).size;
    const first: ModelLoadProgress[] = [];
    await tiny({ cache: true }).load({ onLoad: (progress) => void first.push(progress) });

    expect(first[0]).toMatchObject({ phase: 'checking' });
    const downloads = first.filter((progress) => progress.phase === 'downloading');
    expect(downloads.at(-1)).toMatchObject({ loadedBytes: size, totalBytes: size, fraction: 1 });
    expect(first.at(-1)).toMatchObject({
      phase: 'ready',
      cached: false,
      model: 'wasm/tiny-llama.gguf',
    });
    expect(await wasmModelCache.list()).toEqual([{ url: MODEL_URL, bytes: size }]);
    expect((await wasmModelCache.usage()).modelBytes).toBe(size);

    const second: ModelLoadProgress[] = [];
    await tiny({ cache: true }).load({ onLoad: (progress) => void second.push(progress) });
    expect(second.map((progress) => progress.phase)).toEqual(['checking', 'loading', 'ready']);
    expect(second.at(-1)).toMatchObject({ cached: true });

    await wasmModelCache.clear();
    expect(await wasmModelCache.list()).toEqual([]);
  });

  it('stops generating when the call is aborted mid-answer, with no finish', async () => {
    const model = tiny({ grammar: 'root ::= [a-z]{1500}', maxTokens: 2000 });
    const controller = new AbortController();
    const parts = [];
    for await (const part of model.stream(
      { messages: [{ role: 'user', content: 'Go on.' }], tools: [] },
      { signal: controller.signal, idleTimeoutMs: 30_000 },
    )) {
      parts.push(part);
      if (parts.length === 3) controller.abort();
    }
    expect(parts).toHaveLength(3);
    // The engine is free again: the next call answers in full.
    const after = await model.complete(
      { messages: [{ role: 'user', content: 'x' }], tools: [], options: { max_tokens: 4 } },
      { signal: new AbortController().signal },
    );
    expect(after.usage.completionTokens).toBe(4);
  });

  it.each([
    ['a truncated GGUF', async () => (await (await fetch(MODEL_URL)).blob()).slice(0, 4096)],
    ['bytes that are no GGUF', async () => new Blob([new Uint8Array(4096).fill(7)])],
  ])('fails %s with model-unavailable, reason load-failed', async (_, weights) => {
    const model = tiny({ model: await weights() });
    const failure = await model
      .complete(
        { messages: [{ role: 'user', content: 'x' }], tools: [] },
        { signal: new AbortController().signal },
      )
      .catch((error: unknown) => error);
    expect(isAirlockError(failure, 'model-unavailable')).toBe(true);
    expect(failure).toMatchObject({ details: { reason: 'load-failed' } });
  });

  it('fails a wrong URL with model-unavailable naming the status, and an unreachable one as unreachable', async () => {
    const missing = await tiny({ model: MISSING_URL })
      .load()
      .catch((error: unknown) => error);
    expect(missing).toMatchObject({
      code: 'model-unavailable',
      details: { reason: 'not-found', status: 404, url: MISSING_URL },
    });
    const unreachable = await tiny({ model: 'http://127.0.0.1:9/model.gguf' })
      .load()
      .catch((error: unknown) => error);
    expect(unreachable).toMatchObject({
      code: 'model-unavailable',
      details: { reason: 'unreachable' },
    });
  });

  it('fails a prompt longer than its context with model-unavailable, and answers the next call', async () => {
    const model = tiny({ contextSize: 256 });
    const huge = 'x'.repeat(100_000);
    const failure = await model
      .complete(
        { messages: [{ role: 'user', content: huge }], tools: [] },
        { signal: new AbortController().signal },
      )
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: 'model-unavailable',
      details: { reason: 'inference-failed' },
    });

    const after = await model.complete(
      { messages: [{ role: 'user', content: 'x' }], tools: [], options: { max_tokens: 4 } },
      { signal: new AbortController().signal },
    );
    expect(after.usage.promptTokens).toBeGreaterThan(0);
  });

  it('fails a call waiting for the weights with model-unavailable, disposed, when the model is disposed', async () => {
    const model = tiny();
    const loading = model.load().catch((error: unknown) => error);
    await model.dispose();
    expect(await loading).toMatchObject({
      code: 'model-unavailable',
      details: { reason: 'disposed' },
    });
    const later = await model.load().catch((error: unknown) => error);
    expect(later).toMatchObject({ code: 'model-unavailable', details: { reason: 'disposed' } });
  });

  it('refuses a bad config with invalid-options naming the field', async () => {
    for (const [config, field] of [
      [{ model: '', wasmUrl }, 'model'],
      [{ model: new Blob([]), wasmUrl }, 'model'],
      [{ model: MODEL_URL, wasmUrl: 42 }, 'wasmUrl'],
      [{ model: MODEL_URL, wasmUrl, contextSize: -1 }, 'contextSize'],
      [{ model: MODEL_URL, wasmUrl, maxTokens: 1.5 }, 'maxTokens'],
      [{ model: MODEL_URL, wasmUrl, compat: { worker: 1 } }, 'compat'],
    ] as const) {
      const failure = await wasmModel(config as unknown as WasmModelConfig)
        .load()
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'invalid-options', details: { field } });
    }
  });
});

describe.runIf(!hasMemory64)('wasmModel where WebAssembly has no memory64', () => {
  it('fails with model-unavailable, reason unsupported, naming the compat build', async () => {
    const failure = await tiny()
      .load()
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: 'model-unavailable',
      details: { reason: 'unsupported' },
    });
    expect((failure as Error).message).toContain('@wllama/wllama-compat');
  });
});

describe('an agent worker routing to the on-device model', () => {
  function agentWith(weights: 'tiny' | 'missing', baseURL: string) {
    const cities: string[] = [];
    const agent = createAgent({
      worker: () =>
        new Worker(new URL('./fixtures/wasm-model.worker.ts', import.meta.url), { type: 'module' }),
      model: { model: weights, baseURL },
      tools: [
        tool({
          name: 'get_weather',
          description: 'Current weather for a city.',
          parameters: z.object({ city: z.string() }),
          execute: ({ city }) => {
            cities.push(city);
            return { sky: 'sunny' };
          },
        }),
      ],
      limits: { maxSteps: 2 },
      memory: { database: `wasm-model-${crypto.randomUUID()}`, tools: false },
      startTimeoutMs: WORKER_START_MS,
    });
    onTestFinished(() => agent.dispose());
    return { agent, cities };
  }

  it.skipIf(!hasMemory64)(
    'runs the tool the on-device model called, with arguments that fit its schema, in the agent worker',
    async () => {
      const cloud = await createRemoteSession(inject('modelServerUrl'), []);
      const { agent, cities } = agentWith('tiny', cloud.baseURL);

      const events = await collect(agent.run('Weather?', { modelOptions: { seed: 7 } }));

      expect(events.find((event) => event.type === 'model-route')).toMatchObject({
        route: 'on-device',
      });
      const call = events.find((event) => event.type === 'tool-call');
      expect(call).toMatchObject({
        toolName: 'get_weather',
        arguments: { city: expect.any(String) },
      });
      expect(cities).toHaveLength(events.filter((event) => event.type === 'tool-call').length);
      // The tool ran (in the page, called by the agent worker) and its output went back.
      expect(events.find((event) => event.type === 'tool-result')).toMatchObject({
        toolName: 'get_weather',
        ok: true,
        output: { sky: 'sunny' },
      });
      expect(events.at(-1)?.type).toBe('run-finish');
      expect(cloud.requests).toHaveLength(0);
    },
    120_000,
  );

  it('falls back to the cloud route when the on-device weights are not there', async () => {
    const cloud = await createRemoteSession(inject('modelServerUrl'), [
      { text: 'From the cloud.' },
    ]);
    const { agent } = agentWith('missing', cloud.baseURL);

    const run = agent.run('Hi');
    const events = await collect(run);

    expect(events.find((event) => event.type === 'model-route')).toMatchObject({
      route: 'cloud',
      passedOver: [{ route: 'on-device', reason: 'failed', error: { code: 'model-unavailable' } }],
    });
    expect((await run.result).text).toBe('From the cloud.');
  });
});
