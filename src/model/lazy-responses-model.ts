import type OpenAI from 'openai';
import type { AirlockError } from '../errors/airlock-error';
import type { ModelConfig } from '../protocol/wire';
import type { Timers } from '../timing/wait';
import type { ChatModel } from './chat-model';

/** What the Responses model borrows from the one module that imports `openai` at run time. */
export interface OpenAITransport {
  readonly client: OpenAI;
  /** Turns what the SDK threw into a typed error. */
  readonly fail: (error: unknown) => AirlockError;
  /** Awaits an SDK call unless `signal` aborts first (the SDK's retry waits do not listen). */
  readonly settled: <T>(promise: Promise<T>, signal: AbortSignal) => Promise<T>;
  /** The JSON payloads of a streamed response's body (see `streamedPayloads`). */
  readonly payloads: (response: Response, signal: AbortSignal) => AsyncIterable<unknown>;
}

/**
 * A `ChatModel` over the Responses API whose code loads on its first call, so agents on
 * Chat Completions (the default) never load it.
 */
export function createLazyResponsesModel(
  config: ModelConfig,
  transport: OpenAITransport,
  timers: Timers,
): ChatModel {
  let loaded: Promise<ChatModel> | undefined;
  const load = () => {
    loaded ??= import('./openai-responses-model').then((module) =>
      module.createOpenAIResponsesModel(config, transport, timers),
    );
    return loaded;
  };
  return {
    name: config.model,
    async *stream(request, options) {
      yield* (await load()).stream(request, options);
    },
    async complete(request, options) {
      return (await load()).complete(request, options);
    },
  };
}
