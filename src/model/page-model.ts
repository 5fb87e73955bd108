// The agent worker's side of page models, kept to a few lines: the calls are made by a
// chunk of their own (page-model-calls.ts), loaded on the first call, so a worker that never
// calls a page model carries none of it.
import { isRecord } from '../errors/field-checks';
import { loadChunk } from '../runtime/load-chunk';
import type { ChatModel } from './chat-model';
import type { PageModelOptions, PageOffer } from './page-model-options';

export type { PageModelOptions } from './page-model-options';

let offer: PageOffer | undefined;
let listening = false;

/**
 * Listens for the page's offer, which the page posts before anything else. The first valid
 * one is taken; only the worker's creator (the page that owns the agent) can post here.
 */
function listenForOffer(): void {
  if (listening || typeof globalThis.addEventListener !== 'function') return;
  listening = true;
  const take = (event: Event) => {
    const data: unknown = (event as MessageEvent).data;
    const offered = isRecord(data) ? data.airlockPageModels : undefined;
    if (offer || !isRecord(offered) || !(offered.port instanceof MessagePort)) return;
    const names = offered.names;
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) return;
    offer = { port: offered.port, names: [...names] };
    globalThis.removeEventListener('message', take);
  };
  globalThis.addEventListener('message', take);
}

/**
 * A `ChatModel` answered by the model the page serves as `name` (`withPageModels(worker,
 * { [name]: promptApiModel() })` on the page): for models that exist on the page only, like
 * Chrome's Prompt API. Call it at the top of the agent worker entry, so it hears the page's
 * offer, which comes first. Tools are offered in the prompt and read back from fenced JSON
 * blocks (`toolCalling: 'prompted'`), so every call still goes through the loop's policy.
 * No page model of that name: `model-unavailable`, which a router (`route([...])`) passes over.
 */
export function pageModel(name: string, options: PageModelOptions = {}): ChatModel {
  listenForOffer();
  let calls: Promise<Pick<ChatModel, 'stream' | 'complete'>> | undefined;
  const load = () => {
    calls ??= loadChunk('page-model-calls', () => import('./page-model-calls')).then((module) =>
      module.pageModelCalls(name, () => offer, options),
    );
    return calls;
  };
  return {
    name: typeof options.name === 'string' ? options.name : name,
    async *stream(request, callOptions) {
      yield* (await load()).stream(request, callOptions);
    },
    async complete(request, completeOptions) {
      return (await load()).complete(request, completeOptions);
    },
  };
}
