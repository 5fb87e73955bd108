/**
 * `airlock-agents/models`: models for an agent worker entry that serves its own
 * (`serveAgent({ model })`): the router, the built-in OpenAI model to put in a route, and the
 * on-device model (llama.cpp in WebAssembly) with its weights' cache. An entry apart from
 * `airlock-agents/worker`, so a worker that never routes carries none of it.
 */

export { type ModelRoute, type RouteOptions, route } from './model/route-model';
export {
  type WasmModel,
  type WasmModelConfig,
  type WasmModelLoadOptions,
  type WasmPromptFormat,
  wasmModel,
} from './model/wasm-model';
export { defaultWasmPrompt } from './model/wasm-prompt';
export {
  type CachedModelFile,
  type ModelStorageUse,
  WASM_MODEL_CACHE,
  wasmModelCache,
} from './model/wasm-weights';
export type { ModelLoadProgress } from './protocol/model-load';
export type { ModelRouteChoice, PassedOverRoute, RoutePassReason } from './protocol/model-routes';
export { openAIModel } from './worker/services/openai-model';
