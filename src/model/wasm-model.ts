// The on-device model's front, kept to a few lines: llama.cpp (wllama) and the code that drives
// it load in a chunk of their own on the first call or `load()`, so a worker that imports
// `airlock-agents/models` and never runs this model carries none of it.
import { loadChunk } from '../runtime/load-chunk';
import type { ChatModel } from './chat-model';
import type { WasmModelConfig, WasmModelLoadOptions } from './wasm-config';
import type { WasmEngine } from './wasm-engine';

export type { WasmModelConfig, WasmModelLoadOptions } from './wasm-config';
export type { WasmPromptFormat } from './wasm-prompt';

/** An on-device model: a `ChatModel`, and its weights' life. */
export interface WasmModel extends ChatModel {
  /** Gets the weights ready before the first call (a calls does this itself otherwise). */
  load(options?: WasmModelLoadOptions): Promise<void>;
  /** Ends the engine's worker and frees its memory; later calls fail `model-unavailable`. */
  dispose(): Promise<void>;
}

/**
 * A `ChatModel` run on the device by llama.cpp compiled to WebAssembly (`@wllama/wllama`, an
 * optional peer dependency), in a worker of its own. Streams text; with tools offered, its
 * answer is held by a grammar to `{"text": …}` or `{"tool_calls": […]}`, read back as
 * Airlock's tool calls. Weights that cannot be fetched or loaded fail the call with
 * `model-unavailable` (a router then tries its next route); a bad config with `invalid-options`,
 * on the first call.
 */
export function wasmModel(config: WasmModelConfig): WasmModel {
  const name =
    typeof config?.name === 'string'
      ? config.name
      : `wasm/${typeof config?.model === 'string' || config?.model instanceof URL ? String(config.model).split('/').pop() : 'model'}`;
  let engine: Promise<WasmEngine> | undefined;
  const load = () => {
    engine ??= loadChunk('wasm-engine', () => import('./wasm-engine')).then((module) =>
      module.wasmEngine(config, name),
    );
    return engine;
  };
  return {
    name,
    async *stream(request, options) {
      yield* (await load()).stream(request, options);
    },
    async complete(request, options) {
      return (await load()).complete(request, options);
    },
    async load(options = {}) {
      await (await load()).load(options);
    },
    async dispose() {
      await (await engine)?.dispose();
    },
  };
}
