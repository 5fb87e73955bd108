// What an app tells `wasmModel`, and the check of it (run in the engine's chunk, on the first
// call, so the front stays a few lines).
import { AirlockError } from '../errors/airlock-error';
import type { ModelLoadProgress } from '../protocol/model-load';
import type { WasmPromptFormat } from './wasm-prompt';

/** What `wasmModel` runs, and how. */
export interface WasmModelConfig {
  /**
   * The GGUF file: its URL (fetched once with progress, then kept in the Cache API's
   * `airlock-models` cache; see `wasmModelCache`), or a `Blob`/`File` the app holds.
   */
  readonly model: string | URL | Blob;
  /**
   * Where the app serves wllama's `wllama.wasm` (from `@wllama/wllama/esm/wasm/`); with Vite,
   * `import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url'`.
   */
  readonly wasmUrl: string | URL;
  /** The model's name in runs and events (default `wasm/<file name>`). */
  readonly name?: string;
  /** The context, in tokens, the engine is set up with (default 2048). */
  readonly contextSize?: number;
  /** Most tokens an answer may have when the request does not say (default 512). */
  readonly maxTokens?: number;
  /** CPU threads; more than 1 needs a cross-origin isolated page (COOP/COEP). Default 1. */
  readonly threads?: number;
  /** Layers offloaded to WebGPU (default 0: CPU only; WebGPU was not tested by Airlock). */
  readonly gpuLayers?: number;
  /** Keep weights fetched from a URL in the cache (default `true`). */
  readonly cache?: boolean;
  /** Makes the prompt from the messages and tools (default: `defaultWasmPrompt`, a role-tagged transcript). */
  readonly formatPrompt?: WasmPromptFormat;
  /**
   * A GBNF grammar every answer is held to, in place of Airlock's. With tools offered it must
   * produce Airlock's JSON envelope (`{"text": …}` or `{"tool_calls": […]}`), else plain text.
   */
  readonly grammar?: string;
  /** URLs of `@wllama/wllama-compat`'s worker and wasm, for browsers without WebAssembly memory64 (Safari). */
  readonly compat?: { readonly worker: string; readonly wasm: string };
}

/** Options of `WasmModel.load`. */
export interface WasmModelLoadOptions {
  readonly signal?: AbortSignal;
  /** Told each step of getting the weights ready: checking the cache, downloading, loading, ready. */
  readonly onLoad?: (progress: ModelLoadProgress) => Promise<void> | void;
}

/** `invalid-options` naming the first field of `config` that is wrong. */
export function checkWasmConfig(config: WasmModelConfig): void {
  const wrong = (field: string, rule: string) =>
    new AirlockError('invalid-options', `wasmModel: \`${field}\` ${rule}.`, { details: { field } });
  if (typeof config !== 'object' || config === null) throw wrong('config', 'must be an object');
  const { model, wasmUrl } = config;
  if (
    !(typeof model === 'string' && model.length > 0) &&
    !(model instanceof URL) &&
    !(model instanceof Blob)
  )
    throw wrong('model', 'must be the GGUF file’s URL or a Blob of it');
  if (model instanceof Blob && model.size === 0) throw wrong('model', 'is an empty Blob');
  if (!(typeof wasmUrl === 'string' && wasmUrl.length > 0) && !(wasmUrl instanceof URL))
    throw wrong('wasmUrl', 'must be the URL the app serves wllama.wasm at');
  for (const field of ['contextSize', 'maxTokens', 'threads'] as const) {
    const value = config[field];
    if (value !== undefined && !(Number.isInteger(value) && value > 0 && value <= 1_048_576))
      throw wrong(field, 'must be a whole number from 1 to 1048576');
  }
  if (
    config.gpuLayers !== undefined &&
    !(Number.isInteger(config.gpuLayers) && config.gpuLayers >= 0)
  )
    throw wrong('gpuLayers', 'must be a whole number, 0 or more');
  if (config.grammar !== undefined && typeof config.grammar !== 'string')
    throw wrong('grammar', 'must be a string');
  if (config.formatPrompt !== undefined && typeof config.formatPrompt !== 'function')
    throw wrong('formatPrompt', 'must be a function');
  if (
    config.compat !== undefined &&
    !(typeof config.compat?.worker === 'string' && typeof config.compat?.wasm === 'string')
  )
    throw wrong('compat', 'must be `{ worker, wasm }`, the URLs of @wllama/wllama-compat’s build');
}
