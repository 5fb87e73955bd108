// The Prompt API model through the page bridge, both sides in this page over a real
// MessageChannel: the ChatModel contract, and what the worker side does with bad page input.

import { type PageModel, promptApiModel, withPageModels } from 'airlock-agents/models';
import {
  type ConformanceScenario,
  chatModelConformance,
  type FakePromptTurn,
  fakeLanguageModel,
} from 'airlock-agents/testing/remote';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ChatModel, ModelStreamPart } from '../../src/model/chat-model';
import { pageModelCalls } from '../../src/model/page-model-calls';
import type { ModelLoadProgress } from '../../src/protocol/model-load';

/** The worker side of `models` served by the page side, over a real port, in this page. */
function bridged(models: Record<string, PageModel>, name = 'nano'): ChatModel {
  let offer: { port: MessagePort; names: readonly string[] } | undefined;
  const standIn = {
    postMessage: (message: { airlockPageModels: typeof offer }) => {
      offer = message.airlockPageModels;
    },
    terminate: () => undefined,
  } as unknown as Worker;
  const worker = withPageModels(() => standIn, models)();
  onTestFinished(() => worker.terminate());
  return { name, ...pageModelCalls(name, () => offer, {}) };
}

const block = (tool: string, args: unknown) =>
  `\`\`\`json\n${JSON.stringify({ tool, arguments: args })}\n\`\`\``;

function turnFor(scenario: ConformanceScenario): FakePromptTurn {
  switch (scenario.kind) {
    case 'text':
      return { text: scenario.text };
    case 'slow-text':
      return { text: scenario.text, chunkChars: 6, chunkDelayMs: scenario.pauseMs };
    case 'tool-calls':
      return { text: scenario.calls.map((call) => block(call.name, call.arguments)).join('\n') };
    case 'failure':
      return { error: { name: 'OperationError', message: 'The engine fell over.' } };
    case 'hang':
      return { hang: true };
  }
}

async function streamed(model: ChatModel, signal = new AbortController().signal) {
  const parts: ModelStreamPart[] = [];
  const loads: ModelLoadProgress[] = [];
  let error: unknown;
  try {
    for await (const part of model.stream(
      { messages: [{ role: 'user', content: 'Hi' }], tools: [] },
      { signal, idleTimeoutMs: 30_000, onLoad: (load) => void loads.push(load) },
    ))
      parts.push(part);
  } catch (caught) {
    error = caught;
  }
  const text = parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
  return { parts, loads, text, error };
}

describe('the Prompt API model through the page bridge keeps the ChatModel contract', () => {
  const cases = chatModelConformance({
    model: (scenario) => {
      const fake = fakeLanguageModel({ turns: [turnFor(scenario)] });
      return bridged({ nano: promptApiModel({ languageModel: fake.LanguageModel }) });
    },
    settleWithinMs: 20_000,
  });
  for (const conformance of cases) it(conformance.name, conformance.run);
});

describe('the page bridge, given bad input from the page', () => {
  it('tells a download as load progress before the answer, and the prompt carries the system text first', async () => {
    const fake = fakeLanguageModel({ availability: 'downloadable', turns: [{ text: 'Ready.' }] });
    const model = bridged({ nano: promptApiModel({ languageModel: fake.LanguageModel }) });
    const parts: ModelStreamPart[] = [];
    const loads: ModelLoadProgress[] = [];
    for await (const part of model.stream(
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
        tools: [],
      },
      {
        signal: new AbortController().signal,
        idleTimeoutMs: 30_000,
        onLoad: (l) => void loads.push(l),
      },
    ))
      parts.push(part);
    expect(loads).toEqual([
      { model: 'nano', phase: 'checking' },
      { model: 'nano', phase: 'downloading', fraction: 0 },
      { model: 'nano', phase: 'downloading', fraction: 0.5 },
      { model: 'nano', phase: 'downloading', fraction: 1 },
      { model: 'nano', phase: 'loading' },
      { model: 'nano', phase: 'ready', cached: false },
    ]);
    expect(
      parts
        .filter((part) => part.type === 'text-delta')
        .map((p) => p.delta)
        .join(''),
    ).toBe('Ready.');
    expect(fake.creates[0]?.initialPrompts).toEqual([{ role: 'system', content: 'Be brief.' }]);
    expect(fake.prompts[0]?.input).toEqual([{ role: 'user', content: 'Hi' }]);
    expect(fake.destroyed).toBe(1);
    expect(fake.availability).toBe('available');
  });

  it('fails model-unavailable when the page has no Prompt API at all', async () => {
    // Chromium here has a LanguageModel of its own: this page hides it, as a browser without it would.
    const own = Object.getOwnPropertyDescriptor(globalThis, 'LanguageModel');
    Object.defineProperty(globalThis, 'LanguageModel', { value: undefined, configurable: true });
    onTestFinished(() => {
      if (own) Object.defineProperty(globalThis, 'LanguageModel', own);
      else Reflect.deleteProperty(globalThis, 'LanguageModel');
    });
    const { error, parts } = await streamed(bridged({ nano: promptApiModel() }));
    expect(error).toMatchObject({
      code: 'model-unavailable',
      details: { reason: 'no-prompt-api' },
    });
    expect(parts).toEqual([]);
  });

  it('fails model-unavailable when the Prompt API says unavailable, creating no session', async () => {
    const fake = fakeLanguageModel({ availability: 'unavailable' });
    const { error } = await streamed(
      bridged({ nano: promptApiModel({ languageModel: fake.LanguageModel }) }),
    );
    expect(error).toMatchObject({ code: 'model-unavailable', details: { reason: 'unavailable' } });
    expect(fake.creates).toHaveLength(0);
  });

  it('fails model-stream-malformed on a chunk that is not text, after the text before it', async () => {
    const fake = fakeLanguageModel({ turns: [{ chunks: ['Fine.', 42, 'so far'] }] });
    const { error, text } = await streamed(
      bridged({ nano: promptApiModel({ languageModel: fake.LanguageModel }) }),
    );
    expect(error).toMatchObject({ code: 'model-stream-malformed' });
    expect(text).toBe('Fine.');
    expect(fake.destroyed).toBe(1);
  });

  it('fails model-failed, with no finish, when the stream errors midway', async () => {
    const fake = fakeLanguageModel({
      turns: [
        { text: 'Half an answer', chunkChars: 5, error: { name: 'EncodingError', afterChunks: 1 } },
      ],
    });
    const { error, parts } = await streamed(
      bridged({ nano: promptApiModel({ languageModel: fake.LanguageModel }) }),
    );
    expect(error).toMatchObject({ code: 'model-failed', details: { name: 'EncodingError' } });
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('maps QuotaExceededError (a prompt too long for the context) to model-unavailable, for a router to pass over', async () => {
    const fake = fakeLanguageModel({ contextWindow: 10, turns: [{ text: 'never' }] });
    const model = bridged({ nano: promptApiModel({ languageModel: fake.LanguageModel }) });
    const { error } = await streamed(model);
    expect(error).toBeUndefined();
    const long = await (async () => {
      const parts: unknown[] = [];
      try {
        for await (const part of model.stream(
          { messages: [{ role: 'user', content: 'x'.repeat(400) }], tools: [] },
          { signal: new AbortController().signal, idleTimeoutMs: 30_000 },
        ))
          parts.push(part);
      } catch (caught) {
        return caught;
      }
      return parts;
    })();
    expect(long).toMatchObject({
      code: 'model-unavailable',
      details: { reason: 'QuotaExceededError' },
    });
  });

  it('fails model-stream-malformed on an answer over maxAnswerChars, and the page session ends', async () => {
    const fake = fakeLanguageModel({
      turns: [{ chunks: ['x'.repeat(600_000), 'y'.repeat(600_000)] }],
    });
    const { error, text } = await streamed(
      bridged({ nano: promptApiModel({ languageModel: fake.LanguageModel }) }),
    );
    expect(error).toMatchObject({ code: 'model-stream-malformed' });
    expect((error as Error).message).toContain('1000000 characters');
    expect(text.length).toBe(600_000);
    await expect.poll(() => fake.destroyed, { timeout: 10_000 }).toBe(1);
  });

  it('refuses a page model that tells a load of an unknown phase or a fraction over 1', async () => {
    for (const progress of [{ phase: 'compiling' }, { phase: 'downloading', fraction: 7 }]) {
      const forged: PageModel = {
        async answer(_call, sink) {
          sink.load(progress as ModelLoadProgress);
          sink.delta('never seen');
          return {};
        },
      };
      const { error, text } = await streamed(bridged({ nano: forged }));
      expect(error).toMatchObject({ code: 'model-stream-malformed' });
      expect(text).toBe('');
    }
  });

  it('refuses a delta that is not text, a forged error code, and a token count that is not whole', async () => {
    const cases: [PageModel, string][] = [
      [
        {
          answer: async (_call, sink) => {
            sink.delta(42 as unknown as string);
            return {};
          },
        },
        'model-stream-malformed',
      ],
      [{ answer: async () => ({ promptTokens: 1.5 }) }, 'model-stream-malformed'],
      [
        {
          answer: async () => {
            throw Object.assign(new Error('forged'), {
              name: 'AirlockError',
              code: 'tool-rejected',
            });
          },
        },
        'model-failed',
      ],
    ];
    for (const [forged, code] of cases) {
      const { error } = await streamed(bridged({ nano: forged }));
      expect(error).toMatchObject({ code });
    }
  });

  it('fails model-unavailable for a name the page does not serve', async () => {
    const fake = fakeLanguageModel({ turns: [{ text: 'Hi' }] });
    const model = bridged({ nano: promptApiModel({ languageModel: fake.LanguageModel }) }, 'mini');
    const { error } = await streamed(model);
    expect(error).toMatchObject({ code: 'model-unavailable', details: { reason: 'not-offered' } });
  });

  it('refuses models that are not page models when the factory is wrapped', () => {
    const factory = () => ({}) as Worker;
    expect(() => withPageModels(factory, { nano: {} as PageModel })).toThrow(/answer/);
    expect(() => withPageModels(factory, { ['x'.repeat(65)]: promptApiModel() })).toThrow(
      /1 to 64/,
    );
  });
});

describe('pageModel’s own options', () => {
  it('refuses a name that is empty or too long, on the first call, with invalid-options', () => {
    expect(() => pageModelCalls('', () => undefined, {})).toThrow(/1 to 64/);
    expect(() => pageModelCalls('nano', () => undefined, { name: 'x'.repeat(201) })).toThrow(/200/);
    expect(() => pageModelCalls('nano', () => undefined, { maxAnswerChars: -1 })).toThrow(
      /positive/,
    );
  });
});
