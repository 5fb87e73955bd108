import type { AirlockError } from '../errors/airlock-error';
import type { ModelConfig, RunLimits } from '../protocol/agent-config';
import type { Budgets, ModelPrice, RateLimitConfig } from '../protocol/budgets';
import type { KnowledgeRetrieval } from '../protocol/knowledge';
import type { Confidentiality, FlowPolicy } from '../protocol/labels';
import type { McpServerConfig } from '../protocol/mcp';
import type { LearnRule } from '../protocol/memory';
import type { ModelOptions } from '../protocol/model-options';
import type { DirectToolCall } from '../protocol/wire';
import type { Tool } from '../tools/define-tool';
import type { ToolSchema } from '../tools/standard-schema';
import type { GuardrailOptions } from './guardrail-host';
import type { RunInput } from './run-input';
import type { ToolsetOptions } from './toolset-options';

// What the app gives `createAgent`, `run` and `resume`: types only, read by the page entry
// and by the agent's start.

/** How the page describes an agent. */
export interface AgentOptions {
  /**
   * Starts the agent worker, in the form bundlers understand:
   * `() => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' })`.
   * The entry calls `serveAgent()` from `airlock-agents/worker`.
   */
  readonly worker: () => Worker;
  /**
   * Starts the app's tab hub, through which runs are seen, stopped and answered in other tabs
   * (`agent.watch`): `() => new SharedWorker(new URL('./tabs.worker.ts', import.meta.url),
   * { type: 'module', name: 'airlock-tabs' })`, whose entry calls `serveTabs()` from
   * `airlock-agents/tabs`. Without it a watch sees this agent's own runs only. Give it only
   * where `SharedWorker` exists: a factory that throws fails `ready` with `worker-load-failed`.
   */
  readonly tabs?: () => SharedWorker;
  /** The model endpoint. A relative `baseURL` (e.g. `/llm/v1`) is resolved against the page. */
  readonly model: ModelConfig;
  /** The system prompt. */
  readonly instructions?: string;
  /** Tools that run on the page thread (they can touch the DOM). */
  readonly tools?: readonly Tool[];
  /** Sandboxed tools: each toolset runs in workers of its own, killed at a call's deadline. */
  readonly toolsets?: readonly ToolsetOptions[];
  /**
   * MCP servers whose tools the agent may call, reached from the agent worker (normally
   * through the app's proxy route, `/mcp/<name>`); their tools are named `<server>__<tool>`.
   * `ready` waits until each is connected and has listed its tools. See docs/mcp.md.
   */
  readonly mcp?: readonly McpServerConfig[];
  /** When set, only these tools are offered to the model and may run (e.g. the tools of the user's role). */
  readonly allowedTools?: readonly string[];
  /** Bounds on each run. */
  readonly limits?: Partial<RunLimits>;
  /** The conversation runs continue unless a run names another (default: a new one); at most 256 characters. */
  readonly conversationId?: string;
  /** Where and how the agent remembers (IndexedDB, in the agent worker). */
  readonly memory?: MemoryOptions;
  /**
   * What each run (`run`) and each conversation (`conversation`, all its runs) may spend:
   * model calls, tool calls, tokens, cost. Going over ends the run with `budget-exceeded`.
   */
  readonly budgets?: Budgets;
  /** Prices per model name, per million prompt and completion tokens; give `cost` in usage. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** Requests and tokens per minute for all runs of this agent; calls wait their turn. */
  readonly rateLimit?: RateLimitConfig;
  /** Functions that check, rewrite or block the input, the final answer and tool arguments; they run on the page. */
  readonly guardrails?: GuardrailOptions;
  /** How documents added with `agent.knowledge.add` are chunked, embedded and retrieved. */
  readonly knowledge?: KnowledgeOptions;
  /**
   * Information-flow control (docs/information-flow.md): once untrusted data (tool output,
   * MCP answers, memories, knowledge, attachments) is in a run's context, a call to a sink
   * tool waits for approval or is refused, and data of a confidentiality level reaches only
   * the destinations `allowedDestinations` names for it. Absent: labels are not enforced.
   */
  readonly flow?: FlowPolicy;
  /**
   * How long the agent worker may take to load and answer (default 10 000 ms). One that
   * does not (a script that 404s or throws, one blocked by the page's CSP `worker-src`, one
   * that never calls `serveAgent`) is terminated, and `ready` and every run fail with
   * `worker-load-failed`. Toolsets have their own `startTimeoutMs`.
   */
  readonly startTimeoutMs?: number;
}

/** How an agent's knowledge base works; every field has a default. */
export interface KnowledgeOptions {
  /**
   * How runs use the documents: `inject` (default) puts the best chunks for the user's
   * input in the context before the first step; `tool` offers `search_knowledge` instead;
   * `both`; `off`. Nothing is retrieved, and no embedding requested, while no document is stored.
   */
  readonly retrieval?: KnowledgeRetrieval;
  /** Chunks retrieved per query at most (default 4). */
  readonly k?: number;
  /** Chunks less similar than this (cosine, -1 to 1) are left out (default 0.2). */
  readonly minScore?: number;
  /** Target chunk length in characters (default 1 000). */
  readonly chunkChars?: number;
  /** Characters each chunk repeats from the previous one (default 150). */
  readonly overlapChars?: number;
  /** The model sent to the endpoint's `/embeddings` (default `text-embedding-3-small`). */
  readonly embeddingModel?: string;
  /** Chunks per embeddings request (default 64). */
  readonly batchSize?: number;
  /** Asks the embedding model for shorter vectors, if it can shorten them. */
  readonly dimensions?: number;
}

/** How an agent remembers; every field has a default. */
export interface MemoryOptions {
  /** The IndexedDB database (default `airlock`). */
  readonly database?: string;
  /** Memories the model saves as lasting belong to this user (default: global). */
  readonly userId?: string;
  /** History per model call: the newest `maxMessages` (default 40) within `maxTokens` (default 8 000, estimated). */
  readonly window?: { readonly maxMessages?: number; readonly maxTokens?: number };
  /** Summarise messages that fall out of the window (default true). */
  readonly summarize?: boolean;
  /**
   * Estimated tokens the saved memories may take in each run's context
   * (default 1 000): the most important are taken first; one larger than what is left is skipped.
   */
  readonly maxMemoryTokens?: number;
  /** Offer the built-in save_memory / recall_memories / forget_memory tools (default true). */
  readonly tools?: boolean;
  /**
   * Told of each stored row that a read of `agent.memory` left out, as a `storage-failed`
   * error naming its table, its key and what is wrong with it: a row another version or
   * other same-origin code wrote in a shape Airlock cannot use. The read still answers,
   * without it. Runs report such rows as `storage-error` events. Default: `console.warn`.
   * What the hook throws is reported as an event listener's error is (`window`'s `error`
   * event); the read still answers.
   */
  readonly onStorageError?: (error: AirlockError) => void;
  /**
   * How long opening the database may wait for another tab that holds it at an older
   * schema version (and does not close when asked), and how long the first transaction may
   * wait for tables another connection still holds, before `ready` rejects, and runs fail,
   * with `storage-blocked` (default 5 000 ms).
   */
  readonly openTimeoutMs?: number;
  /**
   * Ask the browser, once when the agent is created, not to evict the database under
   * storage pressure (`navigator.storage.persist()`); the answer is `agent.storage`'s
   * `persisted` (default false: not asked). Firefox asks the user first: an answer that does
   * not come within 3 s leaves `persisted` absent.
   */
  readonly persist?: boolean;
  /**
   * Learn memories from each finished run: by rules (where a rule's pattern matches the
   * user's input or the answer) and, with `model`, by one structured-output call to the
   * agent's model that proposes adds, updates and deletions. What is learnt is applied, or
   * proposed for the app to confirm (`confirm: true`: stored as proposals, which survive a
   * reload, until `agent.memory.acceptProposal` or `dismissProposal`); each change is
   * announced by a `memory-learned` event.
   */
  readonly learn?: {
    readonly rules?: readonly LearnRule[];
    readonly confirm?: boolean;
    /**
     * The model extractor (default: off). `instructions` say what to look for (app-written,
     * so trusted); `maxTokens` caps its answer (default 600). Its tokens are reported apart,
     * as the run result's `learning`.
     */
    readonly model?: { readonly instructions?: string; readonly maxTokens?: number };
  };
}

/** Options of one run. */
export interface RunOptions {
  /** Aborting it ends the run with reason `aborted` and closes the model request. */
  readonly signal?: AbortSignal;
  /** Narrows the agent's tools for this run; others are neither offered nor run. */
  readonly allowedTools?: readonly string[];
  /**
   * Makes this one tool call instead of asking the model, through the same checks, approval,
   * budgets, flow policy and audit (rows name `caller`). Used by `exposeToWebMCP`: the result's
   * `text` is JSON, `{ ok: true, output }` or `{ ok: false, error }`. Such a run is never
   * resumed: after a reload it is settled as cancelled (docs/mcp.md#webmcp-and-a-reload).
   */
  readonly toolCall?: DirectToolCall;
  /**
   * The label of this run's input and attachments (docs/information-flow.md): e.g.
   * `{ confidentiality: 'private' }`. Default `public`. Not taken by `resume`, which keeps
   * the labels the run stored.
   */
  readonly labels?: { readonly confidentiality?: Confidentiality };
  /** The conversation to continue (default: the agent's); at most 256 characters. */
  readonly conversationId?: string;
  /**
   * Structured output: the final answer must be JSON fitting this object schema (any
   * Standard Schema with JSON Schema support, e.g. zod 4). It is asked for as
   * `response_format` (or in the system message, see `model.structuredOutput`), mended,
   * validated here, and sent back once with what is wrong; `result.output` is typed from
   * the schema. A second answer that does not fit fails the run with `output-invalid`.
   */
  readonly output?: ToolSchema;
  /** The model name for this run's calls, instead of `model.model`. */
  readonly model?: string;
  /**
   * Request fields for this run's calls (`max_completion_tokens`, `seed`, `stop`, …), over
   * the agent's `model.options`.
   */
  readonly modelOptions?: ModelOptions;
  /** The system prompt for this run, instead of the agent's `instructions`. */
  readonly instructions?: string;
  /**
   * Page tools offered in this run beside the agent's (made with `tool()`): their code runs
   * here, through the same checks, approvals and audit log. A name the agent already has
   * fails the run with `invalid-options`. The agent's `allowedTools` does not name them;
   * the run's own `allowedTools` does.
   */
  readonly tools?: readonly Tool[];
}

/**
 * What `agent.retryRefused` takes: a resume's options, and the input that replaces the
 * refused turn's (default: its stored input, attachments included).
 */
export type RetryOptions = Omit<RunOptions, 'conversationId'> & {
  /** The new input, e.g. the same question with a smaller image; checked as `run`'s. */
  readonly input?: RunInput;
};

/** Run options that ask for structured output. */
export type StructuredRunOptions<S extends ToolSchema> = RunOptions & { readonly output: S };
