import type { ModelConfig } from '../protocol/agent-config';
import { loadChunk } from '../runtime/load-chunk';
import type { Timers } from '../timing/timers';
import type { ChatModel } from './chat-model';
import type { OpenAITransport } from './openai-transport';

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
    loaded ??= loadChunk('openai-responses-model', () => import('./openai-responses-model')).then(
      (module) => module.createOpenAIResponsesModel(config, transport, timers),
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
