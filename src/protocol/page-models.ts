import type { ErrorData } from './errors';
import type { ModelLoadProgress } from './model-load';

// The wire between an agent worker's page models (`pageModel(name)`) and the models the page
// serves (`withPageModels(worker, { name: promptApiModel() })`): models that exist on the page
// only, such as Chrome's Prompt API, which is not exposed in workers.

/**
 * Page → agent worker, posted on the worker itself, once, before anything else: the port
 * to the page's models and their names. Only the worker's creator can post there, so the
 * port is a capability of the page that owns the agent, not a name anyone could open.
 */
export interface PageModelsOffer {
  readonly airlockPageModels: {
    readonly port: MessagePort;
    readonly names: readonly string[];
  };
}

/** One message of a page model's prompt: text only, in the Chat Completions roles. */
export interface PagePromptMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** One call of a page model, as the agent worker asks the page for it. */
export interface PageModelCall {
  readonly callId: string;
  /** The page model's name, as the page offered it. */
  readonly model: string;
  /** The prompt: a system message first (when there is one), then the turns. */
  readonly messages: readonly PagePromptMessage[];
  /** Sampling of the call, from the request's `options`, where given. */
  readonly temperature?: number;
  readonly topK?: number;
}

/** Agent worker → page, on the offered port. `cancel` aborts a call (its signal aborted). */
export type WorkerToPageModels =
  | ({ readonly kind: 'call' } & PageModelCall)
  | { readonly kind: 'cancel'; readonly callId: string };

/**
 * Page → agent worker, on the offered port, per call: `load` while the model checks or
 * downloads its weights, `delta`s of the answer, then `end` (with the prompt's token count
 * where the model measured it) or `error`. The worker checks every one: the page's model
 * is code the agent does not trust to be well formed.
 */
export type PageModelsToWorker =
  | {
      readonly kind: 'load';
      readonly callId: string;
      readonly progress: Omit<ModelLoadProgress, 'model'>;
    }
  | { readonly kind: 'delta'; readonly callId: string; readonly text: string }
  | { readonly kind: 'end'; readonly callId: string; readonly promptTokens?: number }
  | { readonly kind: 'error'; readonly callId: string; readonly error: ErrorData };
