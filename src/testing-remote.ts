/**
 * `airlock-agents/testing/remote`: the browser-safe client for the fake model
 * server's control API, plus the script types it sends.
 */

export type {
  ConformanceCase,
  ConformanceScenario,
  ConformanceSubject,
} from './testing/chat-model-conformance.js';
export {
  ConformanceFailure,
  chatModelConformance,
  conformanceTurn,
} from './testing/chat-model-conformance.js';
export type {
  FakeLanguageModel,
  FakeLanguageModelOptions,
  FakePromptRecord,
  FakePromptTurn,
} from './testing/fake-language-model.js';
export { fakeLanguageModel } from './testing/fake-language-model.js';
export { HASHED_EMBEDDING_DIMENSION, hashedEmbedding } from './testing/hashed-embedding.js';
export type { RemoteModelSession, RemoteWaitOptions } from './testing/remote.js';
export { createRemoteSession } from './testing/remote.js';
export type {
  ModelScript,
  RecordedRequest,
  ScriptedFault,
  ScriptedHttpError,
  ScriptedReply,
  ScriptedToolCall,
  ScriptedTransport,
  ScriptedTurn,
  ScriptedUsage,
  SessionOptions,
} from './testing/script.js';
export { isScriptedHttpError } from './testing/script.js';
