/**
 * `airlock-agents/models`: models for an agent worker entry that serves its own
 * (`serveAgent({ model })`): the router, the built-in OpenAI model to put in a route, the
 * on-device model (llama.cpp in WebAssembly) with its weights' cache, and `pageModel(name)`
 * for a model that lives on the page; and, for the page, `withPageModels` and
 * `promptApiModel` (Chrome's Prompt API) that serve such models to the worker.
 * An entry apart from `airlock-agents/worker` and `airlock-agents`, so a worker that never
 * routes, and a page without page models, carry none of it.
 */

export { type PageModelOptions, pageModel } from './model/page-model';
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
export {
  type PageModel,
  type PageModelSink,
  withPageModels,
} from './page/page-model-host';
export { type PromptApiModelOptions, promptApiModel } from './page/prompt-api-model';
export type { ModelLoadProgress } from './protocol/model-load';
export type { ModelRouteChoice, PassedOverRoute, RoutePassReason } from './protocol/model-routes';
export type { PageModelCall, PagePromptMessage } from './protocol/page-models';
export type {
  LanguageModelApi,
  LanguageModelAvailability,
  LanguageModelCoreOptions,
  LanguageModelCreateOptions,
  LanguageModelExpected,
  LanguageModelMessage,
  LanguageModelParams,
  LanguageModelPrompt,
  LanguageModelPromptOptions,
  LanguageModelSession,
} from './protocol/prompt-api';
export { openAIModel } from './worker/services/openai-model';
