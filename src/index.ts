/**
 * Airlock's page entry: create an agent whose loop runs in a Web Worker, define page
 * tools, and read typed events. It imports neither the model SDK nor the database.
 */
export { AirlockError, isAirlockError } from './errors/airlock-error';
export type { Agent } from './page/agent';
export type { AddKnowledgeOptions, AgentKnowledge } from './page/agent-knowledge';
export type { AgentMemory } from './page/agent-memory';
export type {
  AgentOptions,
  KnowledgeOptions,
  MemoryOptions,
  RetryOptions,
  RunOptions,
  StructuredRunOptions,
} from './page/agent-options';
export { AgentRun } from './page/agent-run';
export { AgentWatch } from './page/agent-watch';
export { createAgent } from './page/create-agent';
export type {
  GuardrailOptions,
  InputGuardrail,
  OutputGuardrail,
  ToolArgumentsGuardrail,
} from './page/guardrail-host';
export { IFRAME_BOOTSTRAP_HASH, IFRAME_TRUSTED_TYPES_POLICY } from './page/iframe-policy';
export type { RunInput, RunInputPart } from './page/run-input';
export type {
  IframeToolsetOptions,
  SandboxStats,
  ToolsetCommonOptions,
  ToolsetOptions,
  WorkerToolsetOptions,
} from './page/toolset-options';
export type { ModelApi, ModelConfig, RunLimits, StorageStatus } from './protocol/agent-config';
export type {
  Budget,
  BudgetName,
  Budgets,
  ModelPrice,
  RateLimitConfig,
  RunUsage,
} from './protocol/budgets';
export type {
  AttachmentRef,
  ChatMessage,
  ChatToolCall,
  FinishReason,
  ImageDetail,
  ReasoningItem,
  Usage,
  UserContentPart,
} from './protocol/chat';
export type {
  ErrorCode,
  ErrorData,
  ToolErrorCode,
  ToolErrorData,
  WarningCode,
} from './protocol/errors';
export type {
  AgentEvent,
  AgentEventType,
  RunFinishReason,
  RunResult,
  StepSummary,
  StepToolCall,
} from './protocol/events';
export type {
  GuardedToolCall,
  GuardrailContext,
  GuardrailDecision,
  GuardrailStage,
} from './protocol/guardrails';
export type {
  KnowledgeDocumentInput,
  KnowledgeDocumentRecord,
  KnowledgeHit,
  KnowledgeProgress,
  KnowledgeRetrieval,
  KnowledgeSource,
} from './protocol/knowledge';
export type {
  CallFlow,
  Confidentiality,
  FlowLabel,
  FlowPolicy,
  FlowRule,
  FlowSource,
  Integrity,
  RunFlow,
  ValueLabel,
} from './protocol/labels';
export type { McpApproval, McpServerConfig } from './protocol/mcp';
export type {
  AuditRecord,
  ConversationExport,
  ConversationListOptions,
  ConversationRecord,
  ConversationSearchHit,
  ExportedAttachment,
  ImportOptions,
  LearnRule,
  MemoryInput,
  MemoryProposal,
  MemoryRecord,
  MemoryScope,
  MemorySource,
  MessageRecord,
  PendingApproval,
  RunRecord,
  StoreChange,
  StoreTable,
} from './protocol/memory';
export type { ModelLoadProgress } from './protocol/model-load';
export type { ModelOptions, ReasoningEffort } from './protocol/model-options';
export type { ModelRouteChoice, PassedOverRoute, RoutePassReason } from './protocol/model-routes';
export type { IsolationTier, ToolReuse } from './protocol/sandbox-wire';
export type { ConversationDetail, KnowledgeApi, MemoryApi } from './protocol/store-api';
export type {
  ApprovalPolicy,
  JsonSchema,
  QuarantineCall,
  ToolCallRecord,
  ToolContentResult,
  ToolDescriptor,
  ToolImage,
  ToolPolicy,
  ToolQuarantine,
  ToolSpec,
} from './protocol/tools';
export type { AttachmentLabel } from './protocol/wire';
export {
  type ApprovalRule,
  type SinkRule,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  tool,
} from './tools/define-tool';
export type { InferSchemaOutput, ToolSchema } from './tools/standard-schema';
export {
  type FunctionTool,
  type FunctionToolOptions,
  type ToolOutput,
  toolFromFunction,
} from './tools/tool-from-function';
