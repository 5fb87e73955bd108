// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import type { ModelStreamPart } from '../../../src/model/chat-model';
import { createOpenAIChatModel } from '../../../src/model/openai-chat-model';
import type { ScriptedTurn } from '../../../src/testing-remote.js';
import { useModelServer } from '../support/model-server';

const server = useModelServer();

const request = { messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };

/** Streams one call of the real chat model against `turns`; the parts, the error, the requests. */
async function streamAgainst(turns: ScriptedTurn[]) {
  const session = server.createSession(turns);
  const model = createOpenAIChatModel({ baseURL: session.baseURL, model: 'm', maxRetries: 0 });
  const parts: ModelStreamPart[] = [];
  let error: unknown;
  try {
    for await (const part of model.stream(request, {
      signal: new AbortController().signal,
      idleTimeoutMs: 200,
    }))
      parts.push(part);
  } catch (thrown) {
    error = thrown;
  }
  const text = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : [])).join('');
  return { text, error, requests: session.requests.length };
}

describe('a stream that goes silent', () => {
  it('is retried once when it stalled before any text or tool call, and the retry is all the caller sees', async () => {
    const { text, error, requests } = await streamAgainst([
      { text: 'lost', fault: { kind: 'stall', afterChunks: 1 } },
      { text: 'Second try.' },
    ]);

    expect(error).toBeUndefined();
    expect(text).toBe('Second try.');
    expect(requests).toBe(2);
  });

  it('is not retried once text was yielded, so the caller never sees an answer twice', async () => {
    const { text, error, requests } = await streamAgainst([
      { text: 'Half an', fault: { kind: 'stall', afterChunks: 2 } },
      { text: 'Half an answer, again.' },
    ]);

    expect(isAirlockError(error, 'model-stream-idle')).toBe(true);
    expect(error).toMatchObject({ details: { timeoutMs: 200, attempts: 1 } });
    expect(text).toBe('Half');
    expect(requests).toBe(1);
  });

  it('is not retried once a tool call began', async () => {
    const { error, requests } = await streamAgainst([
      {
        toolCalls: [{ name: 'lookup', arguments: { q: 'x' } }],
        fault: { kind: 'stall', afterChunks: 2 },
      },
      { text: 'never' },
    ]);

    expect(error).toMatchObject({ code: 'model-stream-idle', details: { attempts: 1 } });
    expect(requests).toBe(1);
  });

  it('fails model-stream-idle on the second silent attempt, with no third', async () => {
    const { error, requests } = await streamAgainst([
      { text: 'a', fault: { kind: 'stall', afterChunks: 0 } },
      { text: 'b', fault: { kind: 'stall', afterChunks: 1 } },
      { text: 'never' },
    ]);

    expect(error).toMatchObject({ code: 'model-stream-idle', details: { attempts: 2 } });
    expect(requests).toBe(2);
  });
});
