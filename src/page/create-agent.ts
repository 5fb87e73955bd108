import { AirlockError, isAirlockError } from '../errors/airlock-error';
import { checkField, idCheck } from '../errors/field-checks';
import type { LearnRule } from '../memory/learn-rules';
import type { ModelOptions } from '../model/model-options';
import type { Budgets, ModelPrice, RateLimitConfig } from '../protocol/budgets';
import type { KnowledgeRetrieval } from '../protocol/knowledge';
import type { McpServerConfig } from '../protocol/mcp';
import { DEFAULT_DATABASE } from '../protocol/memory';
import type { ModelConfig, RunLimits, StorageStatus } from '../protocol/wire';
import type { Tool } from '../tools/define-tool';
import type { InferSchemaOutput, ToolSchema } from '../tools/standard-schema';
import type { AgentKnowledge } from './agent-knowledge';
import type { AgentMemory } from './agent-memory';
import { AgentRun, loadRunStream, type StructuredRunResult } from './agent-run';
import type { RunStart } from './agent-setup';
import type { AgentStart } from './agent-start';
import { AgentWatch } from './agent-watch';
import type { GuardrailOptions } from './guardrail-host';
import { lazyKnowledge, lazyMemory } from './lazy-clients';
import type { RunInput } from './run-input';
import type { SandboxStats, ToolsetOptions } from './sandbox-host';

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

/** Run options that ask for structured output. */
export type StructuredRunOptions<S extends ToolSchema> = RunOptions & { readonly output: S };

/** An agent bound to its worker. */
export interface Agent {
  /**
   * Starts a run on the given user input; iterate it for events, await `result` for the outcome.
   * Bad arguments end the run before anything reaches the worker, as any failure does (a
   * `run-error` event, and `result` rejects): `invalid-input` for an input that is not a
   * non-empty string or list of parts, `input-too-large` for one over `limits.maxInputChars`
   * (or `limits.maxInputBytes` of attachments), `attachment-too-large` for an image or file
   * over `limits.maxAttachmentBytes`, `invalid-options` for bad options. The worker checks
   * attachments' types and bytes (`attachment-unsupported`) before anything is stored.
   */
  run<S extends ToolSchema>(
    input: RunInput,
    options: StructuredRunOptions<S>,
  ): AgentRun<StructuredRunResult<InferSchemaOutput<S>>>;
  run(input: RunInput, options?: RunOptions): AgentRun;
  /**
   * Resolves with the names of all tools once toolsets have started; rejects with
   * `invalid-options` (naming the wrong option in its message and `details.field`),
   * `worker-load-failed`, `toolset-unavailable`, `mcp-unavailable` or `storage-blocked`.
   */
  readonly ready: Promise<readonly string[]>;
  /**
   * Where the agent keeps its data, once `ready`: IndexedDB, or memory when IndexedDB cannot
   * be opened; and the answer to `memory.persist`. Rejects as `ready` does.
   */
  readonly storage: Promise<StorageStatus>;
  /**
   * Picks up a run that waits for approval (see `memory.listRuns`), e.g. after a reload:
   * its `approval-request` events come again, and once answered the run goes on. An
   * interrupted run (closed tab, disposed agent, abort) goes on from its last committed step,
   * reusing stored tool results and never running a started call again. A finished run ends
   * `run-not-resumable`, one running in another tab `conversation-busy`. Ends with
   * `invalid-input` for a run id that is not a non-empty string, `invalid-options` for bad
   * options, before anything reaches the worker.
   */
  resume<S extends ToolSchema>(
    runId: string,
    options: Omit<StructuredRunOptions<S>, 'conversationId'>,
  ): AgentRun<StructuredRunResult<InferSchemaOutput<S>>>;
  resume(runId: string, options?: Omit<RunOptions, 'conversationId'>): AgentRun;
  /**
   * Follows the runs of a conversation (default: the agent's) that any tab of the origin
   * starts on the same database, live: their events in order, each once, and `stop`,
   * `approve` and `reject` relayed to the tab that runs them. See docs/tabs.md. Throws
   * `invalid-input` at once for a conversation id that is not a non-empty string.
   */
  watch(conversationId?: string): AgentWatch;
  /** The conversation runs continue by default. */
  readonly conversationId: string;
  /** Stored conversations, memories, runs and the tool-call audit log. */
  readonly memory: AgentMemory;
  /** Documents the agent retrieves from (retrieval-augmented generation, all in the browser). */
  readonly knowledge: AgentKnowledge;
  /** Worker counts of each toolset, as the page sees them. */
  sandboxStats(): Record<string, SandboxStats>;
  /**
   * Ends running runs with `agent-disposed` and terminates every worker: the agent worker
   * once it has closed its store (within a second), so no transaction of it is cut off.
   * Idempotent.
   */
  dispose(): void;
  /** True once `dispose` was called. */
  readonly disposed: boolean;
}

/** What `sandboxStats` reports for a toolset before the agent's start has loaded. */
const NO_WORKERS: SandboxStats = { live: 0, started: 0, killed: 0 };

/**
 * Creates an agent whose loop runs in a Web Worker. The page keeps only this thin client:
 * the model SDK and the loop live in the worker, sandboxed tools in workers of their own.
 * The options are checked as the agent starts, before its worker does: one that is missing
 * or wrong fails `ready`, and every run, with an `invalid-options` `AirlockError` whose
 * message and `details.field` name it, and no worker is started.
 */
export function createAgent(options: AgentOptions): Agent {
  // Taken now, as the app gave them (they are checked once the start has loaded): a later
  // change to the options object, at any depth, changes nothing.
  const given = copied(options);
  const runs = new Set<AgentRun>();
  const watches = new Set<AgentWatch>();
  let disposed = false;
  const lifetime = new AbortController();
  const endAll = (error: AirlockError) => {
    for (const run of [...runs]) run.fail(error);
    for (const watch of [...watches]) watch.end();
  };
  // The start (with the option checks) and the runs' code load at once; the start creates
  // the worker. A run whose code fails to load reports it itself.
  loadRunStream().catch(() => {});
  let started: AgentStart | undefined;
  const starting = import('./agent-start')
    .then(({ startAgent }) => {
      if (disposed) throw new AirlockError('agent-disposed', 'This agent was disposed.');
      started = startAgent(given, lifetime.signal, endAll);
      return started;
    })
    .catch((error: unknown) => {
      throw isAirlockError(error)
        ? error
        : new AirlockError(
            'worker-load-failed',
            `Airlock's page code could not load: ${error instanceof Error ? error.message : String(error)}.`,
            { cause: error },
          );
    });
  // Wrong options and a page that could not load its code end what already waits on the agent.
  starting.catch(endAll);
  const ready = starting.then((start) => start.ready);
  // Runs report a failed start themselves; an app that never reads `ready` must not see it unhandled.
  ready.catch(() => {});
  const storage = starting.then((start) => start.storage);
  storage.catch(() => {});
  const defaultConversation =
    typeof given?.conversationId === 'string' ? given.conversationId : crypto.randomUUID();
  const database = given?.memory?.database;

  /**
   * Creates the page side of a run. Once the start has loaded, `prepare` checks the run's
   * arguments and makes its request; once the agent is ready, the worker is asked to start
   * it on a port of its own.
   */
  const startRun = (
    runId: string,
    conversationId: string,
    runOptions: RunOptions,
    prepare: (start: AgentStart) => RunStart,
  ): AgentRun => {
    const channel = new MessageChannel();
    let signal: AbortSignal | undefined;
    const onAbort = () => run.abort();
    let markEnded: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const run = new AgentRun(
      runId,
      channel.port1,
      () => {
        runs.delete(run);
        signal?.removeEventListener('abort', onAbort);
        markEnded();
      },
      runOptions?.output,
    );
    if (disposed) {
      run.fail(new AirlockError('agent-disposed', 'This agent was disposed; create a new one.'));
      return run;
    }
    runs.add(run);
    starting
      .then(async (start) => {
        const prepared = prepare(start);
        signal = runOptions.signal;
        if (signal?.aborted) {
          run.abortBeforeStart(start.model, conversationId);
          return;
        }
        signal?.addEventListener('abort', onAbort, { once: true });
        await start.ready;
        await start.run(prepared, channel.port2, ended);
      })
      .catch((error: unknown) => {
        run.fail(
          isAirlockError(error)
            ? error
            : new AirlockError('worker-crashed', 'The agent worker did not accept the run.', {
                cause: error,
              }),
        );
      });
    return run;
  };

  return {
    ready,
    storage,
    get disposed() {
      return disposed;
    },
    // One implementation for both overloads: the schema types only what `result` resolves with.
    run: ((input: RunInput, runOptions: RunOptions = {}) => {
      // A list of parts is copied too: an app may empty its list of attachments once sent.
      const parts = copied(input);
      const taken = copied(runOptions);
      const runId = crypto.randomUUID();
      const conversationId =
        typeof taken?.conversationId === 'string' ? taken.conversationId : defaultConversation;
      return startRun(runId, conversationId, taken, (start) =>
        start.prepareRun(runId, parts, taken, conversationId),
      );
    }) as Agent['run'],
    resume: ((runId: string, runOptions: Omit<RunOptions, 'conversationId'> = {}) => {
      const taken = copied(runOptions);
      // A run id that is no string is refused once the start has loaded; until then, and in
      // the refusal's event, the run is known by an empty id rather than a value of another type.
      const known = typeof runId === 'string' ? runId : '';
      return startRun(known, '', taken, (start) => start.prepareResume(runId, taken));
    }) as Agent['resume'],
    watch(conversationId = defaultConversation) {
      checkField(conversationId, 'conversationId', idCheck, 'invalid-input');
      const channel = new MessageChannel();
      const watch = new AgentWatch(conversationId, channel.port1, () => watches.delete(watch));
      if (disposed) {
        watch.end();
        return watch;
      }
      watches.add(watch);
      ready
        .then(() => (started as AgentStart).watch(conversationId, channel.port2))
        // A failed start or a crash ends the watch; `ready` says why.
        .catch(() => watch.end());
      return watch;
    },
    conversationId: defaultConversation,
    memory: lazyMemory(
      () => starting.then((start) => start.memory()),
      typeof database === 'string' ? database : DEFAULT_DATABASE,
    ),
    knowledge: lazyKnowledge(() => starting.then((start) => start.knowledge())),
    sandboxStats: () =>
      started?.sandboxStats() ??
      Object.fromEntries(
        (Array.isArray(given?.toolsets) ? given.toolsets : []).map((toolset) => [
          toolset?.name,
          NO_WORKERS,
        ]),
      ),
    dispose() {
      if (disposed) return;
      disposed = true;
      const error = new AirlockError(
        'agent-disposed',
        'The agent was disposed while the run was going on.',
      );
      endAll(error);
      lifetime.abort();
      // At once when the start has loaded (tool workers and iframes end now), else once it has.
      if (started) started.dispose(error);
      else
        void starting.then(
          (start) => start.dispose(error),
          () => {},
        );
    },
  };
}

/** How deep `copied` goes; options nested deeper than this are no options Airlock reads. */
const COPY_DEPTH = 32;

/**
 * `value` as it is now: arrays and plain objects are copied (a cycle stays a cycle), so that
 * a later change to the app's options or parts changes nothing; anything else (functions,
 * schemas, signals, bytes), and whatever lies deeper than `COPY_DEPTH`, is kept as it is, so
 * a hostile nesting cannot overflow the stack.
 */
function copied<T>(value: T, seen = new Map<object, unknown>(), depth = 0): T {
  if (typeof value !== 'object' || value === null || depth > COPY_DEPTH) return value;
  const prototype: unknown = Object.getPrototypeOf(value);
  const isArray = Array.isArray(value);
  if (!isArray && prototype !== Object.prototype && prototype !== null) return value;
  if (seen.has(value)) return seen.get(value) as T;
  const copy: Record<string, unknown> = isArray
    ? []
    : prototype === null
      ? Object.create(null)
      : {};
  seen.set(value, copy);
  for (const key of Object.keys(value))
    copy[key] = copied((value as Record<string, unknown>)[key], seen, depth + 1);
  return copy as T;
}
