/**
 * `airlock/testing`: a protocol-exact fake OpenAI Chat Completions server for
 * tests, scripted turn by turn. Node only; browsers use `airlock/testing/remote`.
 */
export type { ModelHandler, ModelHandlerOptions } from './testing/model-handler.js';
export { createModelHandler } from './testing/model-handler.js';
export type { ModelServer, ModelServerOptions, ModelSession } from './testing/model-server.js';
export { startModelServer } from './testing/model-server.js';
export type {
  ModelScript,
  RecordedRequest,
  ScriptedFault,
  ScriptedHttpError,
  ScriptedReply,
  ScriptedToolCall,
  ScriptedTurn,
  ScriptedUsage,
} from './testing/script.js';
export { isScriptedHttpError } from './testing/script.js';
