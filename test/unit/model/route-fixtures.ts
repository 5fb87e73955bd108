// Models and a call helper shared by the router's unit tests.
import { expect } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type {
  ChatModel,
  ModelCallOptions,
  ModelRequest,
  ModelStreamPart,
} from '../../../src/model/chat-model';
import type { ModelRouteChoice } from '../../../src/protocol/model-routes';

export const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
export const tool = {
  name: 'get_weather',
  description: 'Weather.',
  parameters: { type: 'object' },
};
export const text = (words: string): ModelRequest => ({
  messages: [{ role: 'user', content: words }],
  tools: [],
});
export const withImage: ModelRequest = {
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', url: 'https://example.com/cat.png' },
      ],
    },
  ],
  tools: [],
};

/** A model that answers `answer`, or fails with `fault` after streaming `before`. */
export function model(
  name: string,
  behaviour: { answer?: string; fault?: unknown; before?: ModelStreamPart[] } = {},
) {
  const calls: ModelRequest[] = [];
  const chat: ChatModel = {
    name,
    async *stream(request) {
      calls.push(request);
      yield* behaviour.before ?? [];
      if (behaviour.fault !== undefined) throw behaviour.fault;
      yield { type: 'text-delta', delta: behaviour.answer ?? `${name} answers` };
      yield { type: 'finish', finishReason: 'stop' };
      yield { type: 'usage', usage };
    },
    async complete(request) {
      calls.push(request);
      if (behaviour.fault !== undefined) throw behaviour.fault;
      return { text: behaviour.answer ?? `${name} answers`, usage };
    },
  };
  return Object.assign(chat, { calls });
}

export const serverError = () =>
  new AirlockError('model-http-error', 'The model endpoint answered 500.', {
    details: { status: 500 },
  });

/** Streams a call; the text, every choice told, and the error it ended with. */
export async function streamed(
  router: ChatModel,
  request: ModelRequest,
  options: Partial<ModelCallOptions> = {},
) {
  const choices: ModelRouteChoice[] = [];
  const parts: ModelStreamPart[] = [];
  let error: unknown;
  try {
    for await (const part of router.stream(request, {
      signal: new AbortController().signal,
      idleTimeoutMs: 1_000,
      onRoute: (choice) => {
        choices.push(choice);
        // The choice is told before any part of the route's answer.
        expect(parts).toEqual([]);
      },
      ...options,
    }))
      parts.push(part);
  } catch (caught) {
    error = caught;
  }
  const textOf = parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
  return { text: textOf, parts, choices, error };
}
