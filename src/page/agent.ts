import type { StorageStatus } from '../protocol/agent-config';
import type { InferSchemaOutput, ToolSchema } from '../tools/standard-schema';
import type { AgentKnowledge } from './agent-knowledge';
import type { AgentMemory } from './agent-memory';
import type { RetryOptions, RunOptions, StructuredRunOptions } from './agent-options';
import type { AgentRun, StructuredRunResult } from './agent-run';
import type { AgentWatch } from './agent-watch';
import type { RunInput } from './run-input';
import type { SandboxStats } from './toolset-options';

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
   * Sends a refused turn again (one a run ended `input-refused` with): a new run of the
   * conversation with the turn's stored input, text and attachments, or `options.input` in
   * its place (a smaller image, say). The refused turn is removed in the same write that
   * stores the new input, never before: a retry that fails before that (busy conversation,
   * guardrail, bad input) leaves it as it was, and a retry that is refused again leaves its
   * own input as the refused turn instead. A run that has no refused turn in the conversation
   * ends `turn-not-refused`; `invalid-input` for ids that are not non-empty strings, as
   * `run` for a bad input, `invalid-options` for bad options.
   */
  retryRefused<S extends ToolSchema>(
    conversationId: string,
    runId: string,
    options: Omit<StructuredRunOptions<S>, 'conversationId'> & Pick<RetryOptions, 'input'>,
  ): AgentRun<StructuredRunResult<InferSchemaOutput<S>>>;
  retryRefused(conversationId: string, runId: string, options?: RetryOptions): AgentRun;
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
