// The page's side of page models: the worker factory wrapper that offers them to the agent
// worker, and the host that answers the worker's calls on the offered port.
import { AirlockError, isAirlockError } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import type { ErrorData } from '../protocol/errors';
import type { ModelLoadProgress } from '../protocol/model-load';
import type { PageModelCall, PageModelsOffer, PageModelsToWorker } from '../protocol/page-models';

/** Where a page model tells how its call goes. */
export interface PageModelSink {
  /** Load progress (checking, downloading, loading, ready), told to the run as `model-load`. */
  load(progress: Omit<ModelLoadProgress, 'model'>): void;
  /** The next piece of the answer's text. */
  delta(text: string): void;
}

/**
 * A model that runs on the page (the Prompt API is there only) and answers the agent
 * worker's `pageModel(name)` calls: `promptApiModel()`, or an app's own.
 */
export interface PageModel {
  /**
   * Answers one call, telling load progress and text through `sink`. Resolves when the answer
   * is complete, with the prompt's token count where the model measured it; rejects with an
   * `AirlockError` of a `model-…` code (anything else reaches the worker as `model-failed`).
   * When `signal` aborts, it stops soon (what it rejects with then is not reported).
   */
  answer(
    call: PageModelCall,
    sink: PageModelSink,
    signal: AbortSignal,
  ): Promise<{ readonly promptTokens?: number }>;
}

/** Longest name of a page model: a key the worker names, not text. */
const MAX_NAME_CHARS = 64;

/**
 * Wraps the agent worker's factory so the worker can call `models` on this page: each new
 * worker is posted a port to them before anything else, and its entry reaches them with
 * `pageModel(name)` from `airlock-agents/models`. Terminating the worker closes the port.
 * A bad `models` record throws `invalid-options`.
 */
export function withPageModels(
  worker: () => Worker,
  models: Readonly<Record<string, PageModel>>,
): () => Worker {
  if (typeof worker !== 'function')
    throw new AirlockError('invalid-options', '`withPageModels` takes the worker factory first.');
  if (!isRecord(models)) throw new AirlockError('invalid-options', '`models` must be an object.');
  const names = Object.keys(models);
  for (const name of names) {
    if (name === '' || name.length > MAX_NAME_CHARS)
      throw new AirlockError(
        'invalid-options',
        `A page model's name must be 1 to ${MAX_NAME_CHARS} characters.`,
      );
    if (!isRecord(models[name]) || typeof models[name]?.answer !== 'function')
      throw new AirlockError('invalid-options', `Page model "${name}" has no answer() method.`);
  }
  const served = { ...models };
  return () => {
    const instance = worker();
    const channel = new MessageChannel();
    const close = servePageModels(channel.port1, served);
    const offer: PageModelsOffer = { airlockPageModels: { port: channel.port2, names } };
    instance.postMessage(offer, [channel.port2]);
    const terminate = instance.terminate.bind(instance);
    instance.terminate = () => {
      close();
      terminate();
    };
    return instance;
  };
}

/** Answers the calls that arrive on `port`; the returned function aborts them all and closes it. */
function servePageModels(port: MessagePort, models: Readonly<Record<string, PageModel>>) {
  const running = new Map<string, AbortController>();
  const post = (message: PageModelsToWorker) => port.postMessage(message);
  port.onmessage = (event: MessageEvent<unknown>) => {
    const data = event.data;
    if (!isRecord(data) || typeof data.callId !== 'string') return;
    const { callId } = data;
    if (data.kind === 'cancel') {
      running.get(callId)?.abort();
      return;
    }
    if (data.kind !== 'call' || running.has(callId)) return;
    const controller = new AbortController();
    running.set(callId, controller);
    const call = data as unknown as PageModelCall;
    const model = typeof call.model === 'string' ? models[call.model] : undefined;
    const sink: PageModelSink = {
      load: (progress) => {
        if (!controller.signal.aborted) post({ kind: 'load', callId, progress });
      },
      delta: (text) => {
        if (!controller.signal.aborted) post({ kind: 'delta', callId, text });
      },
    };
    const answered = model
      ? Promise.resolve().then(() => model.answer(call, sink, controller.signal))
      : Promise.reject(
          new AirlockError('model-unavailable', `The page serves no model "${call.model}".`, {
            details: { reason: 'not-offered' },
          }),
        );
    answered
      .then(
        (result) => {
          if (controller.signal.aborted) return;
          const promptTokens = result?.promptTokens;
          post({ kind: 'end', callId, ...(promptTokens === undefined ? {} : { promptTokens }) });
        },
        (error: unknown) => {
          if (!controller.signal.aborted) post({ kind: 'error', callId, error: errorOf(error) });
        },
      )
      .finally(() => running.delete(callId));
  };
  return () => {
    for (const controller of running.values()) controller.abort();
    running.clear();
    port.close();
  };
}

/** What a page model threw, as the worker reads it: its own `model-…` error, else `model-failed`. */
function errorOf(error: unknown): ErrorData {
  if (isAirlockError(error) && error.code.startsWith('model-')) {
    const { code, message, details } = error;
    return isRecord(details) ? { code, message, details } : { code, message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'model-failed', message: `The page model failed: ${message}` };
}
