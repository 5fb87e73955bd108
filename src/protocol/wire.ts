import type { Budgets, ModelPrice, RateLimitConfig, RunUsage } from './budgets';
import type { ImageDetail } from './chat';
import type { WireEvent } from './delta-runs';
import type { ErrorData } from './errors';
import type { GuardrailFlags, GuardrailHost } from './guardrails';
import type {
  KnowledgeConfig,
  KnowledgeDocumentInput,
  KnowledgeDocumentRecord,
  KnowledgeHit,
  KnowledgeProgress,
} from './knowledge';
import type { McpServerConfig } from './mcp';
import type {
  AuditRecord,
  ConversationListOptions,
  ConversationRecord,
  ConversationSearchHit,
  ImportOptions,
  LearnConfig,
  MemoryInput,
  MemoryProposal,
  MemoryRecord,
  MemoryScope,
  MessageRecord,
  RunRecord,
} from './memory';
import type { ModelOptions } from './model-options';
import type { SandboxSpawner, ToolsetConfig } from './sandbox-wire';
import type { ToolHost, ToolSpec } from './tools';

/**
 * One part of a run's input, as the page sends it. An image is a `Blob` (a `File` is one),
 * a data URL, or an `https:` URL the model fetches itself; a file (PDF or text) is a `Blob`
 * or a data URL. Blobs and data URLs are stored in the agent's database, once per content.
 */
export type InputPart =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image';
      /** The image: a `Blob`/`File`, a `data:` URL, or an `https:` URL (a `URL` object is read as its `href`). */
      readonly image: Blob | string;
      /** The media type, when the blob's own `type` is empty or wrong. */
      readonly mediaType?: string;
      readonly detail?: ImageDetail;
    }
  | {
      readonly type: 'file';
      /** The file's bytes: a `Blob`/`File` or a `data:` URL. */
      readonly data: Blob | string;
      readonly mediaType?: string;
      /** The name the model is told (default: the `File`'s name, else `file`). */
      readonly filename?: string;
    };

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
   * `attachment-too-large` (default 10 MiB). Absent in configs made before it existed.
   */
  readonly maxAttachmentBytes?: number;
  /** Most attachment bytes one run's input may carry in all; more fails `input-too-large` (default 20 MiB). */
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
}

/** What a run (or a resume) may change about its model calls, for that run alone. */
export interface RunModelOverrides {
  /** The model name sent instead of the agent's. */
  readonly model?: string;
  /** Request fields over the agent's `model.options`. */
  readonly modelOptions?: ModelOptions;
  /** The system prompt instead of the agent's `instructions`. */
  readonly instructions?: string;
  /** Page tools offered in this run beside the agent's (their code stays on the page). */
  readonly tools?: readonly ToolSpec[];
}

/** One run, as the page asks the agent worker for it. */
export interface RunRequest extends RunModelOverrides {
  readonly runId: string;
  /** Text, or parts with attachments (their bytes cross by structured clone). */
  readonly input: string | readonly InputPart[];
  readonly conversationId: string;
  /** Narrows the agent's tools for this run. */
  readonly allowedTools?: readonly string[];
  /** The final answer must be JSON fitting this schema (validated on the page). */
  readonly output?: OutputRequest;
}

/** A run's structured output, as the agent worker learns of it. */
export interface OutputRequest {
  /** The JSON Schema (draft-07) of the answer, made on the page from the app's schema. */
  readonly jsonSchema: Readonly<Record<string, unknown>>;
}

/** What configuring the agent worker came to: the tools it can offer, or why it cannot run. */
export type ConfigureResult =
  | {
      readonly ok: true;
      readonly tools: readonly string[];
      /** Where the agent worker keeps its data (absent from workers older than this field). */
      readonly storage?: Pick<StorageStatus, 'backend'>;
    }
  | { readonly ok: false; readonly error: ErrorData };

/**
 * The agent worker's surface, exposed over Comlink. `configure` once, then `run` per
 * run (or `resume` for a run that waits for approval after a reload); a run's events go
 * over a port transferred for that run alone, and the call resolves when the run has
 * ended. `memory` reads and edits what is stored.
 */
export interface AgentWorkerApi {
  configure(
    config: AgentConfig,
    pageTools: ToolHost,
    sandboxes: SandboxSpawner,
    guardrails: GuardrailHost,
    /** A port to the app's tab hub (`AgentOptions.tabs`): runs are relayed to other tabs there. */
    tabHub?: MessagePort,
  ): Promise<ConfigureResult>;
  /** `runTools` serves the request's `tools` (absent when it has none). */
  run(request: RunRequest, events: MessagePort, runTools?: ToolHost): Promise<void>;
  resume(request: ResumeRequest, events: MessagePort, runTools?: ToolHost): Promise<void>;
  /**
   * Follows the runs of a conversation started in any tab of the origin (on the same
   * database): their events, stops and decisions cross `events` (see `tab-relay.ts`).
   * Resolves when the page closes the watch or the agent ends.
   */
  watch(conversationId: string, events: MessagePort): Promise<void>;
  /**
   * Closes the store and resolves once none of its IndexedDB transactions is in flight, so
   * the page can terminate the worker without leaving the database unusable (WebKit).
   */
  close(): Promise<void>;
  readonly memory: MemoryWire;
  readonly knowledge: KnowledgeApi;
}

/** The methods of `MemoryApi`, for the services and clients that load their code on first call. */
export const MEMORY_METHODS = [
  'listConversations',
  'searchConversations',
  'getConversation',
  'renameConversation',
  'deleteConversation',
  'exportConversation',
  'importConversation',
  'listMemories',
  'saveMemory',
  'updateMemory',
  'deleteMemory',
  'listRuns',
  'conversationUsage',
  'listProposals',
  'acceptProposal',
  'dismissProposal',
  'toolCalls',
] as const satisfies readonly (keyof MemoryApi)[];

/** The methods of `KnowledgeApi`, for the same. */
export const KNOWLEDGE_METHODS = [
  'add',
  'cancel',
  'remove',
  'list',
  'search',
] as const satisfies readonly (keyof KnowledgeApi)[];

/** The memory reads that return stored rows: each row is checked in the worker before it is sent. */
export const CHECKED_MEMORY_READS = [
  'listConversations',
  'searchConversations',
  'getConversation',
  'exportConversation',
  'listMemories',
  'listRuns',
  'conversationUsage',
  'listProposals',
  'toolCalls',
] as const satisfies readonly (keyof MemoryApi)[];

export type CheckedMemoryRead = (typeof CHECKED_MEMORY_READS)[number];

/**
 * A checked read as it crosses from the agent worker: what it found, without the rows that
 * do not have their table's shape, and a `storage-failed` error naming each of those.
 */
export interface CheckedRead<T> {
  readonly value: T;
  readonly leftOut: readonly ErrorData[];
}

/** `MemoryApi` as the agent worker serves it: the checked reads say what they left out. */
export type MemoryWire = {
  readonly [K in keyof MemoryApi]: K extends CheckedMemoryRead
    ? (...args: Parameters<MemoryApi[K]>) => Promise<CheckedRead<Awaited<ReturnType<MemoryApi[K]>>>>
    : MemoryApi[K];
};

/**
 * The agent's knowledge base, served from the agent worker. An import is named by an
 * `operationId` the page chooses, so the page can `cancel` it (a signal cannot cross).
 */
export interface KnowledgeApi {
  /** Chunks, embeds and stores a document, replacing one with the same id in one transaction. */
  add(
    document: KnowledgeDocumentInput,
    operationId: string,
    onProgress?: (progress: KnowledgeProgress) => void,
  ): Promise<KnowledgeDocumentRecord>;
  /** Aborts the import `operationId`; nothing of it is stored. */
  cancel(operationId: string): Promise<void>;
  /** Removes a document and its vectors; removing an unknown id is not an error. */
  remove(id: string): Promise<void>;
  /** Documents, newest first. */
  list(): Promise<KnowledgeDocumentRecord[]>;
  /** The `k` best chunks for `query` scoring at least the agent's `minScore`, best first. */
  search(query: string, k?: number): Promise<KnowledgeHit[]>;
}

/** A run that waits for approval, picked up again after a reload. */
export interface ResumeRequest extends RunModelOverrides {
  /** The id of the run to resume (from `memory.listRuns`). */
  readonly runId: string;
  readonly allowedTools?: readonly string[];
  readonly output?: OutputRequest;
}

/** A conversation with its messages, interrupted ones included. */
export interface ConversationDetail {
  readonly conversation: ConversationRecord;
  readonly messages: readonly MessageRecord[];
}

/** Reading and editing the agent's stored conversations, memories, runs and audit log. */
export interface MemoryApi {
  /**
   * The conversations, newest `updatedAt` first: all of them, or a page of at most `limit`
   * after the conversation `after` (the last one of the page before). A list of many
   * conversations is best read a page at a time: each page reads only its own rows.
   */
  listConversations(options?: ConversationListOptions): Promise<ConversationRecord[]>;
  /**
   * Finds conversations by what the user and the assistant wrote: those with a message in
   * which every word of `query` begins a word (case and accents aside, so a word typed so far
   * matches), newest first, each with that newest message's `seq` and a snippet of it. At
   * most `limit` (default 20, at most 100); a query without words finds none.
   */
  searchConversations(
    query: string,
    options?: { readonly limit?: number },
  ): Promise<ConversationSearchHit[]>;
  getConversation(id: string): Promise<ConversationDetail | undefined>;
  renameConversation(id: string, title: string): Promise<void>;
  deleteConversation(id: string): Promise<void>;
  /** The conversation as JSON text, to save as a file. */
  exportConversation(id: string): Promise<string>;
  /** Imports JSON text made by `exportConversation`; bad input is `invalid-input` and changes nothing. */
  importConversation(json: string, options?: ImportOptions): Promise<ConversationRecord>;
  listMemories(options?: {
    readonly scopes?: readonly MemoryScope[];
    readonly includeExpired?: boolean;
  }): Promise<MemoryRecord[]>;
  saveMemory(input: MemoryInput): Promise<MemoryRecord>;
  updateMemory(
    id: string,
    patch: Partial<Pick<MemoryRecord, 'content' | 'importance' | 'expiresAt' | 'key'>>,
  ): Promise<MemoryRecord>;
  deleteMemory(id: string): Promise<void>;
  listRuns(options?: {
    readonly conversationId?: string;
    readonly statuses?: readonly RunRecord['status'][];
  }): Promise<RunRecord[]>;
  /** What all runs of a conversation consumed (model calls, tool calls, tokens, cost), from their records. */
  conversationUsage(conversationId: string): Promise<RunUsage>;
  /**
   * What `memory.learn` holds in confirm mode, oldest first: all of it, or one
   * conversation's. A proposal stays until accepted, dismissed or its conversation deleted.
   */
  listProposals(options?: { readonly conversationId?: string }): Promise<MemoryProposal[]>;
  /**
   * Applies a proposal and deletes it, in one transaction: saves its memory (returned), or
   * deletes the memory it names (`undefined`; one already gone is no fault). A proposal that
   * is not stored (accepted or dismissed before, maybe in another tab) is `not-found`.
   */
  acceptProposal(id: string): Promise<MemoryRecord | undefined>;
  /** Deletes a proposal without applying it; one that is not stored is no fault. */
  dismissProposal(id: string): Promise<void>;
  /** The tool-call audit log, newest first. */
  toolCalls(options?: {
    readonly conversationId?: string;
    readonly runId?: string;
    readonly limit?: number;
  }): Promise<AuditRecord[]>;
}

/**
 * Agent worker → page, on a run's event port: the events of one worker task, in order,
 * with runs of deltas packed (see `delta-runs.ts`); or whether a decision sent with
 * `approval` was taken (`error` says why it was refused).
 */
export type WorkerToPage =
  | { readonly kind: 'events'; readonly events: readonly WireEvent[] }
  | { readonly kind: 'approval-answer'; readonly approvalId: string; readonly error?: ErrorData }
  /** A final answer, parsed as JSON, for the page to validate against the run's `output` schema. */
  | { readonly kind: 'output-check'; readonly checkId: string; readonly value: unknown };

/**
 * Page → agent worker, on a run's event port. `ack` returns credit for consumed events
 * (backpressure); `cancel` aborts the run; `approval` answers the `approval-request` with
 * that `approvalId`, once; `output-verdict` answers an `output-check` (`issues` when the
 * value does not fit the schema).
 */
export type PageToWorker =
  | { readonly kind: 'ack'; readonly count: number }
  | { readonly kind: 'cancel' }
  | {
      readonly kind: 'approval';
      readonly approvalId: string;
      readonly approved: boolean;
      readonly reason?: string;
    }
  | { readonly kind: 'output-verdict'; readonly checkId: string; readonly issues?: string };

/**
 * Events the worker may send before the page has acknowledged any. A fast stream (one
 * read holding many chunks) produces events in one unbroken run of microtasks, and the
 * worker stops at the window until the page's acknowledgement comes back: each stop costs
 * a round trip between the threads, so a wider window stops it less often (256 was the
 * window before). Events are small (a delta is a few characters), so the bound on a slow
 * reader's queue stays small too.
 */
export const EVENT_WINDOW = 2_048;
