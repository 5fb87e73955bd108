// The built-in model, for an app that puts it among models of its own (e.g. in a route).
// Its config is checked in a chunk loaded on the first call, so the worker's start carries
// only these lines (`npm run size` measures every export of the worker entry).
import type { ChatModel } from '../../model/chat-model';
import type { ModelConfig } from '../../protocol/agent-config';
import { loadChunk } from '../../runtime/load-chunk';

/**
 * The model an agent uses when its worker serves none of its own: the `openai` client at
 * `config.baseURL` (Chat Completions, or the Responses API with `api: 'responses'`). For a
 * worker entry that mixes it with models of its own, e.g. in `route([...])`:
 * `serveAgent({ model: (config) => route([{ model: onDevice }, { model: openAIModel(config) }]) })`.
 * `config` is checked as the page's `model` option is: a bad one fails every call with
 * `invalid-options`, the first one included.
 */
export function openAIModel(config: ModelConfig & { readonly baseURL: string }): ChatModel {
  let model: Promise<ChatModel> | undefined;
  const load = () => {
    model ??= loadChunk('checked-openai-model', () => import('./checked-openai-model')).then(
      (module) => module.checkedOpenAIModel(config),
    );
    return model;
  };
  return {
    name: typeof config?.model === 'string' ? config.model : 'openai',
    async *stream(request, callOptions) {
      yield* (await load()).stream(request, callOptions);
    },
    async complete(request, completeOptions) {
      return (await load()).complete(request, completeOptions);
    },
  };
}
