import type { Budgets, ModelPrice, RateLimitConfig } from './budgets';
import type { GuardrailFlags } from './guardrails';
import type { KnowledgeConfig } from './knowledge';
import type { FlowPolicy } from './labels';
import type { McpServerConfig } from './mcp';
import type { LearnConfig } from './memory';
import type { ModelOptions } from './model-options';
import type { ToolsetConfig } from './sandbox-wire';
import type { ToolSpec } from './tools';

// An agent's configuration as it crosses from the page to the agent worker, once, when the
// agent starts: its model, limits, memory, tools and policies, as plain data.

/** How the agent worker reaches the model. Crosses to the worker as plain data. */
export interface ModelConfig {
  /**
   * Absolute base URL of an OpenAI-compatible endpoint (normally the app's proxy). Required
   * unless the agent worker serves a model of its own (`serveAgent({ model })`); knowledge
   * embeddings always need it.
   */
  readonly baseURL?: string;
  /** The model name sent with every request. */
  readonly model: string;
  /** Extra headers on every request (e.g. an app session token for the proxy). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as the bearer token. The proxy holds the real key, so the default is a placeholder. */
  readonly apiKey?: string;
  /** Retries of 408/409/429/5xx and connection errors, honouring Retry-After (default 2). */
  readonly maxRetries?: number;
  /**
   * Longest Retry-After the client waits out before a retry (default 30 000 ms). A server
   * asking for longer fails the call at once: `model-rate-limited` for a 429, with the
   * server's wait in `details.retryAfterMs`.
   */
  readonly maxRetryAfterMs?: number;
  /** Time allowed until response headers arrive, per attempt (default 60 000 ms). */
  readonly requestTimeoutMs?: number;
  /**
   * Request fields of every call (`temperature`, `reasoning_effort`,
   * `max_completion_tokens`, `seed`, …); a run's own `modelOptions` win.
   */
  readonly options?: ModelOptions;
  /**
   * How tools reach the model: `native` function calling (the default), or `prompted` for
   * endpoints without it: tools are described in the system prompt and calls are read from
   * fenced JSON blocks in the answer.
   */
  readonly toolCalling?: 'native' | 'prompted';
  /**
   * How a run's structured `output` is asked for: `native` sends the schema as
   * `response_format` (`json_schema`), `prompted` puts it in the system message for endpoints
   * without it. Default: `prompted` when `toolCalling` is, else `native`.
   */
  readonly structuredOutput?: 'native' | 'prompted';
  /**
   * The API the model is reached through: `chat` (Chat Completions, the default, which
   * every OpenAI-compatible server speaks) or `responses` (OpenAI's Responses API, used
   * statelessly: nothing is stored upstream and reasoning items travel with the history).
   */
  readonly api?: ModelApi;
}

/** The API a model is reached through. */
export type ModelApi = 'chat' | 'responses';

/** Bounds on one run. */
export interface RunLimits {
  /** Model calls per run; when reached with tools still wanted, the run ends `max-steps` (default 10). */
  readonly maxSteps: number;
  /** Longest silence allowed between two chunks of a streamed response (default 30 000 ms). */
  readonly streamIdleTimeoutMs: number;
  /** Longest input a run takes, in characters; a longer one fails `input-too-large` (default 100 000). */
  readonly maxInputChars: number;
  /**
   * Largest attachment (image or file) of a run's input, in bytes; a larger one fails
   * `attachment-too-large` (default 4 MiB). Absent in configs made before it existed.
   */
  readonly maxAttachmentBytes?: number;
  /** Most attachment bytes one run's input may carry in all; more fails `input-too-large` (default 4 MiB). */
  readonly maxInputBytes?: number;
  /**
   * Longest a model call waits for the network (offline, or a connection refused) before it
   * fails `model-unreachable` (default 60 000 ms; 0: never wait).
   */
  readonly networkWaitMs?: number;
}

/** Where and how an agent remembers. */
export interface MemoryConfig {
  /** The IndexedDB database (default `airlock`); agents sharing it share conversations and memories. */
  readonly database: string;
  /** Long-term memories saved "lasting" are scoped to this user (else global). */
  readonly userId?: string;
  /** History sent with each model call: the newest messages within both bounds. */
  readonly window: { readonly maxMessages: number; readonly maxTokens: number };
  /** Summarise messages that fall out of the window, through the same model (default true). */
  readonly summarize: boolean;
  /** Estimated tokens the saved memories put in a run's context may take, most important first (default 1 000). */
  readonly maxMemoryTokens: number;
  /** Offer the built-in save/recall/forget memory tools (default true). */
  readonly tools: boolean;
  /** Rules that learn memories from each finished run; absent: none. */
  readonly learn?: LearnConfig;
  /**
   * How long opening the database may stay blocked by another tab at an older version
   * before `ready` rejects with `storage-blocked` (default 5 000 ms). Absent in configs
   * made before it existed.
   */
  readonly openTimeoutMs?: number;
}

/** Where the agent keeps what it stores, as `agent.storage` reports it. */
export interface StorageStatus {
  /**
   * `indexeddb`, or `memory` when IndexedDB could not be opened (private mode, disabled
   * storage): conversations then last as long as the agent, and every run warns
   * `storage-unavailable`.
   */
  readonly backend: 'indexeddb' | 'memory';
  /**
   * The answer of `navigator.storage.persist()` when `memory.persist` asked for it: true if
   * the browser will not evict the data under storage pressure. Absent when not asked or
   * not supported.
   */
  readonly persisted?: boolean;
}

/** Everything the agent worker needs to know about an agent. */
export interface AgentConfig {
  readonly model: ModelConfig;
  readonly instructions?: string;
  /** Tools that run on the page. */
  readonly pageTools: readonly ToolSpec[];
  /** Sandboxed toolsets; their tools are learnt from the workers themselves. */
  readonly toolsets: readonly ToolsetConfig[];
  /** MCP servers; their tools are learnt from the servers. Absent in configs made before MCP existed. */
  readonly mcp?: readonly McpServerConfig[];
  /** When set, only these tools are offered and may run. */
  readonly allowedTools?: readonly string[];
  readonly limits: RunLimits;
  readonly memory: MemoryConfig;
  /** What each run and each conversation may spend. */
  readonly budgets?: Budgets;
  /** Prices per model name; the agent's model's price gives `cost` in usage and events. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** Limits model calls of all runs of this agent. */
  readonly rateLimit?: RateLimitConfig;
  /** Which guardrail stages the page has functions for. */
  readonly guardrails: GuardrailFlags;
  /** Documents the agent retrieves from; absent in configs made before knowledge existed. */
  readonly knowledge?: KnowledgeConfig;
  /** The information-flow policy: what labelled data may reach a sink tool. Absent: not enforced. */
  readonly flow?: FlowPolicy;
}
