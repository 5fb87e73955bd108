// @vitest-environment node
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelStreamPart } from '../../../src/model/chat-model';
import { createOpenAIChatModel } from '../../../src/model/openai-chat-model';
import type { ScriptedReply, ScriptedTransport } from '../../../src/testing-remote.js';
import { useModelServer } from '../support/model-server';

const server = useModelServer();

const request = { messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };

/** What the real chat model made of one scripted reply sent with `transport`. */
async function streamThrough(reply: ScriptedReply, transport: ScriptedTransport) {
  const session = server.createSession([{ ...reply, transport }]);
  const model = createOpenAIChatModel({
    baseURL: session.baseURL,
    model: 'airlock-test-model',
    maxRetries: 0,
  });
  const parts: ModelStreamPart[] = [];
  for await (const part of model.stream(request, {
    signal: new AbortController().signal,
    idleTimeoutMs: 5_000,
  }))
    parts.push(part);
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const part of parts) {
    if (part.type !== 'tool-call-delta') continue;
    const call = calls[part.index] ?? { arguments: '' };
    calls[part.index] = call;
    if (part.id) call.id = part.id;
    if (part.name) call.name = part.name;
    call.arguments += part.argumentsDelta;
  }
  return {
    text: parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : [])).join(''),
    calls,
    finish: parts.flatMap((part) => (part.type === 'finish' ? [part.finishReason] : [])),
    usage: parts.some((part) => part.type === 'usage'),
  };
}

const multibyte: ScriptedReply = {
  text: 'Grüße 👋🏽 aus Zürich — 日本語の テキスト, naïve café 🇨🇭!',
  toolCalls: [
    { id: 'call_a', name: 'get_weather', arguments: { city: 'Zürich 🏔', note: 'ß€𝄞' } },
    { id: 'call_b', name: 'lookup', arguments: '{"q":"naïve 日本"}' },
  ],
  argumentChunks: 5,
};

describe('the SSE stream, parsed by the real chat model over HTTP', () => {
  it.each(['lf', 'crlf'] as const)(
    'reads text and tool calls exactly when every byte arrives alone, with %s line ends',
    async (lineEnding) => {
      const everyByte = Array.from({ length: 4_000 }, (_, index) => index + 1);

      // No pause between the ~2 000 one-byte writes (each is still flushed on its own):
      // the property below pauses between its fewer pieces.
      const received = await streamThrough(multibyte, {
        splitAtBytes: everyByte,
        lineEnding,
        pieceDelayMs: 0,
      });

      expect(received.text).toBe(multibyte.text);
      expect(received.calls).toEqual([
        {
          id: 'call_a',
          name: 'get_weather',
          arguments: JSON.stringify({ city: 'Zürich 🏔', note: 'ß€𝄞' }),
        },
        { id: 'call_b', name: 'lookup', arguments: '{"q":"naïve 日本"}' },
      ]);
      expect(received.finish).toEqual(['tool_calls']);
      expect(received.usage).toBe(true);
    },
  );

  it('reads any text and tool arguments exactly, however the bytes are split and whichever line ends', async () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }), { maxLength: 2 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 2_500 }), { maxLength: 40 }),
        fc.constantFrom('lf' as const, 'crlf' as const),
        async (answer, argumentTexts, splitAtBytes, lineEnding) => {
          const reply: ScriptedReply = {
            text: answer,
            toolCalls: argumentTexts.map((value, index) => ({
              id: `call_${index}`,
              name: `tool_${index}`,
              arguments: { value },
            })),
            argumentChunks: 4,
          };

          const received = await streamThrough(reply, { splitAtBytes, lineEnding });

          expect(received.text).toBe(answer);
          expect(received.calls).toEqual(
            argumentTexts.map((value, index) => ({
              id: `call_${index}`,
              name: `tool_${index}`,
              arguments: JSON.stringify({ value }),
            })),
          );
          expect(received.finish).toEqual([argumentTexts.length > 0 ? 'tool_calls' : 'stop']);
        },
      ),
      { numRuns: 60 },
    );
  });
});
