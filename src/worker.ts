/**
 * What an agent worker entry calls. The entry is the app's own file, so bundlers see it:
 * `import { serveAgent } from 'airlock-agents/worker'; serveAgent();`
 */

export { AirlockError, isAirlockError } from './errors/airlock-error';
export type {
  ChatModel,
  ModelCallOptions,
  ModelRequest,
  ModelStreamPart,
  RateLimitWait,
} from './model/chat-model';
export type { ResponseFormat } from './model/structured-output';
export type { ModelConfig } from './protocol/agent-config';
export type { ChatMessage, ChatToolCall, FinishReason, Usage } from './protocol/chat';
export type { ModelLoadProgress } from './protocol/model-load';
export type { ModelOptions } from './protocol/model-options';
export type { ConversationStore } from './store/store';
export type { AgentServiceOptions } from './worker/services/agent-service';
export { serveAgent } from './worker/services/serve-agent';
