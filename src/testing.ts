/**
 * `airlock-agents/testing`: a protocol-exact fake OpenAI Chat Completions server for tests,
 * scripted turn by turn. Node only; everything in `airlock-agents/testing/remote` (the script
 * types and the fetch-only control client) is available here too.
 */

export type { ModelHandler, ModelHandlerOptions } from './testing/model-handler.js';
export { createModelHandler } from './testing/model-handler.js';
export type { ModelServer, ModelServerOptions, ModelSession } from './testing/model-server.js';
export { startModelServer } from './testing/model-server.js';
export * from './testing-remote.js';
