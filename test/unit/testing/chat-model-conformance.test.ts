// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type { ChatModel, ModelStreamPart } from '../../../src/model/chat-model';
import { createOpenAIChatModel } from '../../../src/model/openai-chat-model';
import {
  type ConformanceScenario,
  type ConformanceSubject,
  chatModelConformance,
  conformanceTurn,
} from '../../../src/testing-remote.js';
import { useModelServer } from '../support/model-server';

const server = useModelServer();

const overTheFakeServer = (api: 'chat' | 'responses'): ConformanceSubject => ({
  model: (scenario) =>
    createOpenAIChatModel({
      baseURL: server.createSession([conformanceTurn(scenario)]).baseURL,
      model: 'airlock-test-model',
      maxRetries: 0,
      ...(api === 'responses' ? { api } : {}),
    }),
});

for (const api of ['chat', 'responses'] as const) {
  describe(`the OpenAI ${api === 'chat' ? 'Chat Completions' : 'Responses'} model`, () => {
    for (const check of chatModelConformance(overTheFakeServer(api))) it(check.name, check.run);
  });
}

// The suite must catch a model that breaks the contract, or passing it would say nothing.

/** A hand-written model that answers every scenario as `stream` says. */
function handMade(
  stream: (scenario: ConformanceScenario, signal: AbortSignal) => AsyncIterable<ModelStreamPart>,
): ConformanceSubject {
  return {
    model: (scenario): ChatModel => ({
      name: 'hand-made',
      stream: (_request, { signal }) => stream(scenario, signal),
      async complete(_request, { signal }) {
        let text = '';
        for await (const part of stream(scenario, signal))
          if (part.type === 'text-delta') text += part.delta;
        return { text, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } };
      },
    }),
    settleWithinMs: 1_000,
  };
}

/** A model that keeps the contract, for the faults below to break one piece at a time. */
async function* wellBehaved(
  scenario: ConformanceScenario,
  signal: AbortSignal,
): AsyncIterable<ModelStreamPart> {
  const pause = (ms: number) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
  if (signal.aborted) throw signal.reason;
  switch (scenario.kind) {
    case 'failure':
      throw new AirlockError('model-http-error', 'Refused.');
    case 'hang':
      await pause(60_000);
      return;
    case 'tool-calls':
      for (const [index, call] of scenario.calls.entries()) {
        const args = JSON.stringify(call.arguments);
        yield {
          type: 'tool-call-delta',
          index,
          id: `call_${index}`,
          name: call.name,
          argumentsDelta: args.slice(0, 5),
        };
        yield { type: 'tool-call-delta', index, argumentsDelta: args.slice(5) };
      }
      yield { type: 'finish', finishReason: 'tool_calls' };
      yield { type: 'usage', usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 } };
      return;
    default: {
      const words = scenario.text.split(/(?= )/);
      for (const [index, word] of words.entries()) {
        if (scenario.kind === 'slow-text' && index > 0) await pause(scenario.pauseMs);
        yield { type: 'text-delta', delta: word };
      }
      yield { type: 'finish', finishReason: 'stop' };
      yield { type: 'usage', usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 } };
    }
  }
}

/** The names of the cases `subject` fails, with their messages. */
async function failures(subject: ConformanceSubject): Promise<Record<string, string>> {
  const failed: Record<string, string> = {};
  for (const check of chatModelConformance(subject)) {
    await check.run().catch((error: Error) => {
      failed[check.name] = `${error.name}: ${error.message}`;
    });
  }
  return failed;
}

describe('the suite against hand-made models', () => {
  it('passes a model that keeps the contract', async () => {
    expect(await failures(handMade(wellBehaved))).toEqual({});
  });

  it('fails a model that never says finish, naming the count', async () => {
    const failed = await failures(
      handMade(async function* (scenario, signal) {
        for await (const part of wellBehaved(scenario, signal))
          if (part.type !== 'finish') yield part;
      }),
    );
    expect(failed['streams text as text-delta parts and ends with one finish "stop"']).toMatch(
      /ConformanceFailure: 0 finish parts, not one/,
    );
    expect(Object.keys(failed).filter((name) => name.includes('tool call'))).toHaveLength(2);
  });

  it('fails a model that ignores the abort', async () => {
    const failed = await failures(
      handMade(async function* (scenario) {
        yield* wellBehaved(scenario, new AbortController().signal);
      }),
    );
    expect(failed['an abort while waiting for the answer ends the stream promptly']).toMatch(
      /did not end within 1000 ms after the abort/,
    );
    // Forty words 50 ms apart outlast the subject's second to settle in.
    expect(failed['an abort mid-stream stops the deltas and yields no finish']).toMatch(
      /did not end within 1000 ms after the abort/,
    );
    expect(failed['a signal aborted before the call yields nothing']).toMatch(/yielded \d+ parts/);
  });

  it('fails a model that throws a plain Error, a part the loop does not know, or usage that does not add up', async () => {
    const failed = await failures(
      handMade(async function* (scenario, signal) {
        if (scenario.kind === 'failure') throw new Error('boom');
        for await (const part of wellBehaved(scenario, signal)) {
          if (part.type === 'usage')
            yield {
              type: 'usage',
              usage: { promptTokens: 3, completionTokens: 4, totalTokens: 9 },
            };
          else if (part.type === 'tool-call-delta' && part.id) yield { ...part, id: 'same' };
          else yield part;
        }
        if (scenario.kind === 'text')
          yield { type: 'text', text: 'unknown' } as unknown as ModelStreamPart;
      }),
    );
    expect(failed['a failure throws an AirlockError with a model-… code, after no finish']).toMatch(
      /Error: boom, not an AirlockError/,
    );
    expect(failed['reports usage once, as whole token counts that add up']).toMatch(
      /not a part the loop knows|totalTokens/,
    );
    expect(failed['streams parallel tool calls apart, by index, with distinct ids']).toMatch(
      /share an id/,
    );
  });

  it('leaves out what the subject lacks', () => {
    const names = chatModelConformance({ ...handMade(wellBehaved), lacks: ['tools', 'usage'] }).map(
      (check) => check.name,
    );
    expect(names.some((name) => name.includes('tool call'))).toBe(false);
    expect(names.some((name) => name.includes('usage once'))).toBe(false);
    expect(names).toHaveLength(6);
  });
});
