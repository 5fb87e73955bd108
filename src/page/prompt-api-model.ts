// A page model over Chrome's Prompt API (`LanguageModel`), which exists on the page only.
// The explainer followed: https://github.com/webmachinelearning/prompt-api (README, 2026).
import { AirlockError, isAirlockError } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import type { PageModelCall } from '../protocol/page-models';
import type {
  LanguageModelApi,
  LanguageModelCoreOptions,
  LanguageModelExpected,
  LanguageModelMessage,
  LanguageModelSession,
} from '../protocol/prompt-api';
import type { PageModel, PageModelSink } from './page-model-host';

/** Options of `promptApiModel`. */
export interface PromptApiModelOptions {
  /** The Prompt API; default `globalThis.LanguageModel` (a test passes a fake). */
  readonly languageModel?: LanguageModelApi;
  /** Sampling, passed to `create()`; Chrome takes both or neither, so give both. */
  readonly temperature?: number;
  readonly topK?: number;
  /** What the app sends and expects, with languages, passed to `availability()` and `create()`. */
  readonly expectedInputs?: readonly LanguageModelExpected[];
  readonly expectedOutputs?: readonly LanguageModelExpected[];
}

/**
 * DOMException names of the Prompt API that mean the model cannot serve this call here and
 * now (not supported for these options, not allowed, no download, no room for the prompt):
 * `model-unavailable`, so a router (`route([...])`) tries its next route.
 */
const UNAVAILABLE_NAMES = new Set([
  'NotSupportedError',
  'NotAllowedError',
  'InvalidStateError',
  'QuotaExceededError',
  'OperationError',
  'UnknownError',
  'NetworkError',
]);

/**
 * A page model (`withPageModels(worker, { nano: promptApiModel() })`) answered by the
 * browser's built-in model through the Prompt API. Each call creates a session with the
 * system prompt as `initialPrompts`, streams the turns with `promptStreaming`, and destroys
 * it. Tells `checking`, then `downloading` (the monitor's `downloadprogress`) and `loading`
 * when the model was not on the device, then `ready`. No API: `model-unavailable` with
 * `details.reason` `no-prompt-api`; availability `unavailable`: `unavailable`.
 */
export function promptApiModel(options: PromptApiModelOptions = {}): PageModel {
  return { answer: (call, sink, signal) => answer(options, call, sink, signal) };
}

async function answer(
  options: PromptApiModelOptions,
  call: PageModelCall,
  sink: PageModelSink,
  signal: AbortSignal,
): Promise<{ promptTokens?: number }> {
  sink.load({ phase: 'checking' });
  const api = options.languageModel ?? (globalThis as { LanguageModel?: unknown }).LanguageModel;
  if (!isRecord(api) && typeof api !== 'function')
    throw unavailable('no-prompt-api', 'This browser has no Prompt API (`LanguageModel`).');
  const model = api as unknown as LanguageModelApi;
  const core: LanguageModelCoreOptions = {
    ...(options.expectedInputs ? { expectedInputs: options.expectedInputs } : {}),
    ...(options.expectedOutputs ? { expectedOutputs: options.expectedOutputs } : {}),
  };
  let session: LanguageModelSession | undefined;
  try {
    const availability: unknown = await model.availability(core);
    if (availability === 'unavailable')
      throw unavailable('unavailable', 'The Prompt API says its model is unavailable here.');
    if (
      availability !== 'available' &&
      availability !== 'downloadable' &&
      availability !== 'downloading'
    )
      throw unavailable(
        'unknown-availability',
        `The Prompt API answered availability ${String(availability)}.`,
      );
    const [first, ...rest] = call.messages;
    const system: LanguageModelMessage[] = first?.role === 'system' ? [first] : [];
    const turns: LanguageModelMessage[] = first?.role === 'system' ? rest : [...call.messages];
    session = await model.create({
      ...core,
      initialPrompts: system,
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.topK === undefined ? {} : { topK: options.topK }),
      signal,
      monitor: (monitor) =>
        monitor.addEventListener('downloadprogress', (event) => {
          const loaded = Number((event as Event & { loaded?: unknown }).loaded);
          if (!Number.isFinite(loaded)) return;
          const fraction = Math.min(1, Math.max(0, loaded));
          sink.load({ phase: 'downloading', fraction });
          // The explainer: after the last progress event, the model loads into memory.
          if (fraction === 1) sink.load({ phase: 'loading' });
        }),
    });
    sink.load({ phase: 'ready', cached: availability === 'available' });
    const promptTokens = await measured(session, turns, signal);
    const reader = session.promptStreaming(turns, { signal }).getReader();
    // A stream that ignores the signal is cancelled anyway, so the read below ends.
    const cancel = () => void reader.cancel(signal.reason).catch(() => undefined);
    signal.addEventListener('abort', cancel, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (typeof value !== 'string')
          throw new AirlockError(
            'model-stream-malformed',
            `The Prompt API streamed a ${typeof value} chunk, not text.`,
          );
        if (value) sink.delta(value);
      }
    } finally {
      signal.removeEventListener('abort', cancel);
      reader.releaseLock();
    }
    return promptTokens === undefined ? {} : { promptTokens };
  } catch (error) {
    throw signal.aborted ? error : typed(error);
  } finally {
    session?.destroy();
  }
}

/**
 * The prompt's tokens as the model counts them: the session's (the system prompt) and the
 * turns' measure; undefined where the session cannot say (the worker then estimates).
 */
async function measured(
  session: LanguageModelSession,
  turns: readonly LanguageModelMessage[],
  signal: AbortSignal,
): Promise<number | undefined> {
  const held = session.contextUsage ?? session.inputUsage;
  const measure = session.measureContextUsage ?? session.measureInputUsage;
  if (typeof measure !== 'function' || typeof held !== 'number') return undefined;
  const tokens: unknown = await measure.call(session, turns, { signal });
  const total = held + (tokens as number);
  return typeof tokens === 'number' && Number.isSafeInteger(total) && total >= 0
    ? total
    : undefined;
}

/** What the Prompt API threw, as a typed error (see `UNAVAILABLE_NAMES`). */
function typed(error: unknown): AirlockError {
  if (isAirlockError(error)) return error as AirlockError;
  const name = isRecord(error) && typeof error.name === 'string' ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (UNAVAILABLE_NAMES.has(name))
    return unavailable(name, `The Prompt API refused: ${name}: ${message}`, error);
  return new AirlockError('model-failed', `The Prompt API failed: ${name || 'Error'}: ${message}`, {
    details: { name },
    cause: error,
  });
}

function unavailable(reason: string, message: string, cause?: unknown): AirlockError {
  return new AirlockError('model-unavailable', message, {
    details: { reason },
    ...(cause === undefined ? {} : { cause }),
  });
}
