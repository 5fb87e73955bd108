// The on-device model's engine: llama.cpp compiled to WebAssembly (wllama), in a worker of its
// own that wllama spawns, never on the agent worker's thread. A chunk loaded on the model's
// first call (`wasm-model.ts` is its front), so wllama is in no start bundle.
import {
  CacheManager,
  type RawCompletionChunk,
  type RawCompletionParams,
  Wllama,
  WllamaAbortError,
} from '@wllama/wllama/esm/index.js';
import { AirlockError } from '../errors/airlock-error';
import type { Usage } from '../protocol/chat';
import type { ModelLoadProgress } from '../protocol/model-load';
import { randomId } from '../runtime/random-id';
import { waitFor } from '../timing/wait';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';
import { checkWasmConfig, type WasmModelConfig, type WasmModelLoadOptions } from './wasm-config';
import { defaultWasmPrompt, envelopeSchema, envelopeTextSoFar, parseEnvelope } from './wasm-prompt';
import { hasMemory64 } from './wasm-support';
import { fetchWeights, unavailable } from './wasm-weights';

/** A tool call's arguments stream in pieces of this many characters, as a server's do. */
const ARGUMENT_PIECE_CHARS = 16;

/** wllama's cache manager insists on a storage backend; Airlock keeps the weights itself (`wasm-weights.ts`). */
const NO_STORAGE = {
  isSupported: () => true,
  read: async () => null,
  write: async () => {
    throw new Error('Airlock keeps the weights itself.');
  },
  getSize: async () => -1,
  list: async () => [],
  delete: async () => {},
};

const QUIET = { debug() {}, log() {}, warn() {}, error() {} };

/** The model's calls, once its configuration is checked. */
export interface WasmEngine {
  stream: ChatModel['stream'];
  complete: ChatModel['complete'];
  load(options: WasmModelLoadOptions): Promise<void>;
  dispose(): Promise<void>;
}

/** The engine for `config`, or `invalid-options` naming what is wrong with it. */
export function wasmEngine(config: WasmModelConfig, name: string): WasmEngine {
  checkWasmConfig(config);
  const contextSize = config.contextSize ?? 2048;
  const maxTokens = config.maxTokens ?? 512;
  const format = config.formatPrompt ?? defaultWasmPrompt;
  const listeners = new Set<(progress: ModelLoadProgress) => void>();
  const disposal = new AbortController();
  let loading: Promise<Wllama> | undefined;
  let turns: Promise<void> = Promise.resolve();

  const tell = async (progress: Omit<ModelLoadProgress, 'model'>) => {
    for (const listener of listeners) listener({ model: name, ...progress });
  };

  async function start(): Promise<Wllama> {
    if (!config.compat && !hasMemory64())
      throw unavailable(
        "cannot run here: this browser's WebAssembly has no memory64, which wllama's build needs (serve @wllama/wllama-compat's build and pass it as `compat`)",
        { reason: 'unsupported' },
      );
    const { blob, cached } =
      typeof config.model === 'string' || config.model instanceof URL
        ? await fetchWeights(new URL(config.model, globalThis.location?.href).href, {
            cache: config.cache ?? true,
            signal: disposal.signal,
            report: tell,
          }).catch((error: unknown) => {
            // Disposed while the weights arrived: the download's abort is that, not a fault.
            throw disposal.signal.aborted ? disposed() : error;
          })
        : { blob: config.model, cached: false };
    if (config.model instanceof Blob)
      await tell({ phase: 'loading', loadedBytes: blob.size, totalBytes: blob.size, fraction: 1 });
    const wllama = new Wllama(
      { default: new URL(config.wasmUrl, globalThis.location?.href).href },
      { suppressNativeLog: true, logger: QUIET, cacheManager: new CacheManager([NO_STORAGE]) },
    );
    wllama.setCompat(config.compat ? { ...config.compat } : null);
    try {
      await wllama.loadModel([blob], {
        n_ctx: contextSize,
        n_threads: config.threads ?? 1,
        n_gpu_layers: config.gpuLayers ?? 0,
      });
      // wllama resolves a load llama.cpp refused (its `success: false`); asked here, not at the first call.
      const loaded: { success?: boolean; n_vocab?: number } = wllama.getLoadedContextInfo();
      if (loaded.success !== true || !(Number(loaded.n_vocab) > 0))
        throw new Error('llama.cpp refused the file: not a GGUF model it can read, or cut short');
    } catch (error) {
      await wllama.exit().catch(() => undefined); // the load's failure is the one to report
      throw unavailable(
        `could not be loaded into llama.cpp (${error instanceof Error ? error.message : String(error)})`,
        { reason: 'load-failed' },
        error,
      );
    }
    if (disposal.signal.aborted) {
      await wllama.exit();
      throw disposed();
    }
    await tell({ phase: 'ready', cached });
    return wllama;
  }

  /** The loaded engine; this call's `onLoad` told each step while it loads. */
  async function ready(options: WasmModelLoadOptions): Promise<Wllama> {
    if (disposal.signal.aborted) throw disposed();
    const told: Promise<void>[] = [];
    const listener = (progress: ModelLoadProgress) => {
      if (options.onLoad) told.push(Promise.resolve(options.onLoad(progress)));
    };
    listeners.add(listener);
    try {
      if (!loading) {
        const started = start();
        loading = started;
        // A failed load is tried again by the next call, not remembered.
        started.catch(() => {
          if (loading === started) loading = undefined;
        });
      }
      const waited = await waitFor(loading, { signal: options.signal });
      if (waited.outcome !== 'settled') throw abortReason(options.signal);
      await Promise.all(told);
      return waited.value;
    } finally {
      listeners.delete(listener);
    }
  }

  /** Waits for the calls before this one (llama.cpp serves one at a time); the release. */
  async function turn(signal: AbortSignal): Promise<() => void> {
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = turns;
    turns = before.then(() => mine);
    const waited = await waitFor(before, { signal });
    if (waited.outcome !== 'settled') {
      void before.then(release);
      throw abortReason(signal);
    }
    return release;
  }

  async function* stream(
    request: ModelRequest,
    options: ModelCallOptions | { readonly signal: AbortSignal },
  ): AsyncGenerator<ModelStreamPart> {
    const { signal } = options;
    if (signal.aborted) return;
    let wllama: Wllama;
    let release: () => void;
    try {
      wllama = await ready(options);
      release = await turn(signal);
    } catch (error) {
      // Aborted while the weights loaded or an earlier call answered: the call just ends.
      if (signal.aborted) return;
      throw error;
    }
    const stop = new AbortController();
    let settled: Promise<void> = Promise.resolve();
    const onAbort = () => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const envelope = request.tools.length > 0;
      const settings = request.options ?? {};
      const stopWords = typeof settings.stop === 'string' ? [settings.stop] : settings.stop;
      const { chunks, ended } = completion(wllama, {
        prompt: format(request.messages, request.tools),
        abortSignal: stop.signal,
        max_tokens: settings.max_completion_tokens ?? settings.max_tokens ?? maxTokens,
        ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
        ...(settings.top_p === undefined ? {} : { top_p: settings.top_p }),
        ...(settings.seed === undefined ? {} : { seed: settings.seed }),
        ...(stopWords && !envelope ? { stop: [...stopWords] } : {}),
        ...(config.grammar !== undefined
          ? { grammar: config.grammar }
          : envelope
            ? { json_schema: envelopeSchema(request.tools) }
            : {}),
      });
      let output = '';
      let streamed = 0;
      let finish: string | null | undefined;
      let usage: Usage | undefined;
      // The next call waits until llama.cpp has ended this one, aborted or not.
      settled = ended;
      for await (const chunk of chunks()) {
        // Chunks already on their way when the signal aborted are dropped, not streamed.
        if (signal.aborted) return;
        const choice = chunk.choices[0];
        output += choice?.text ?? '';
        if (choice?.finish_reason) finish = choice.finish_reason;
        if (chunk.usage)
          usage = {
            promptTokens: chunk.usage.prompt_tokens,
            completionTokens: chunk.usage.completion_tokens,
            totalTokens: chunk.usage.prompt_tokens + chunk.usage.completion_tokens,
          };
        const text = envelope ? envelopeTextSoFar(output) : output;
        if (text !== undefined && text.length > streamed) {
          yield { type: 'text-delta', delta: text.slice(streamed) };
          streamed = text.length;
        }
      }
      if (signal.aborted) return;
      if (!finish)
        throw new AirlockError(
          'model-stream-truncated',
          'The on-device model stopped without finishing.',
          {
            details: { receivedChars: output.length, pendingToolCalls: 0 },
          },
        );
      if (envelope && finish === 'stop') {
        const answer = parseEnvelope(output, request.tools);
        if (answer.kind === 'tool-calls') {
          for (const [index, call] of answer.calls.entries()) {
            const pieces = call.arguments.match(
              new RegExp(`[^]{1,${ARGUMENT_PIECE_CHARS}}`, 'g'),
            ) ?? [''];
            for (const [position, piece] of pieces.entries())
              yield position === 0
                ? {
                    type: 'tool-call-delta',
                    index,
                    id: randomId('call'),
                    name: call.name,
                    argumentsDelta: piece,
                  }
                : { type: 'tool-call-delta', index, argumentsDelta: piece };
          }
          finish = 'tool_calls';
        }
      }
      yield {
        type: 'finish',
        finishReason: finish === 'length' || finish === 'tool_calls' ? finish : 'stop',
      };
      if (usage) yield { type: 'usage', usage };
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof AirlockError) throw error;
      throw new AirlockError(
        'model-unavailable',
        `The on-device model failed while answering (${error instanceof Error ? error.message : String(error)}).`,
        {
          details: { reason: error instanceof WllamaAbortError ? 'aborted' : 'inference-failed' },
          cause: error,
        },
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
      stop.abort();
      void settled.then(release);
    }
  }

  return {
    stream,
    async complete(request, options) {
      let text = '';
      let usage: Usage | undefined;
      for await (const part of stream(request, options)) {
        if (part.type === 'text-delta') text += part.delta;
        if (part.type === 'usage') usage = part.usage;
      }
      options.signal.throwIfAborted();
      return {
        text,
        usage: usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0, estimated: true },
      };
    },
    async load(options) {
      await ready(options);
    },
    async dispose() {
      disposal.abort();
      const engine = loading;
      loading = undefined;
      const wllama = await engine?.catch(() => undefined); // a failed load left no engine to end
      await wllama?.exit();
    },
  };
}

/**
 * One completion's chunks, read through wllama's `onData` rather than its iterator: an
 * iterator left when the call aborts would reject later with no one to hear it. `ended`
 * settles (never rejects) once llama.cpp is done with the request.
 */
function completion(
  wllama: Wllama,
  params: Omit<RawCompletionParams, 'stream'> & { json_schema?: unknown },
): { chunks: () => AsyncGenerator<RawCompletionChunk>; ended: Promise<void> } {
  const queue: RawCompletionChunk[] = [];
  let wake = () => {};
  let finished = false;
  let failed = false;
  let failure: unknown;
  const ended = wllama
    .createCompletion({
      ...params,
      stream: true,
      onData: (chunk: RawCompletionChunk) => {
        queue.push(chunk);
        wake();
      },
    })
    .then(
      () => {
        finished = true;
      },
      (error: unknown) => {
        // Read by `chunks()`, which throws it to the call (unless the call was aborted).
        failed = true;
        failure = error;
        finished = true;
      },
    )
    .finally(() => wake());
  async function* chunks(): AsyncGenerator<RawCompletionChunk> {
    for (;;) {
      const chunk = queue.shift();
      if (chunk) yield chunk;
      else if (failed) throw failure;
      else if (finished) return;
      else
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
    }
  }
  return { chunks, ended };
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException('The call was aborted.', 'AbortError');
}

function disposed(): AirlockError {
  return new AirlockError('model-unavailable', 'The on-device model was disposed.', {
    details: { reason: 'disposed' },
  });
}
