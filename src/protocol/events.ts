import type { FinishReason, Usage } from './chat';
import type { ErrorData, ToolErrorData, WarningCode } from './errors';
import type { KnowledgeSource } from './knowledge';
import type { CallFlow, FlowSource } from './labels';
import type { MemoryInput, MemoryRecord } from './memory';
import type { ModelLoadProgress } from './model-load';
import type { ModelRouteChoice } from './model-routes';
import type { QuarantineCall } from './tools';

/** Why a run ended without an error. */
export type RunFinishReason =
  /** The model gave its final answer. */
  | 'stop'
  /** `limits.maxSteps` model calls were made and the model still wanted tools. */
  | 'max-steps'
  /** The run was aborted by its signal, `run.abort()` or breaking out of the event loop. */
  | 'aborted';

/** A tool call as it was made in a step, and whether it succeeded. */
export interface StepToolCall {
  readonly callId: string;
  readonly toolName: string;
  readonly ok: boolean;
}

/** What one step (one model call and the tools it asked for) did. */
export interface StepSummary {
  readonly step: number;
  readonly finishReason: FinishReason;
  readonly text: string;
  /** What the model streamed as its reasoning in this step, when it streamed any. */
  readonly reasoning?: string;
  readonly toolCalls: readonly StepToolCall[];
  readonly usage: Usage;
  /** What the step's model call cost, when the agent's model has a price. */
  readonly cost?: number;
  readonly durationMs: number;
}

/** What a run produced, once it ended without an error. */
export interface RunResult {
  readonly runId: string;
  /** The conversation the run belongs to. */
  readonly conversationId: string;
  readonly reason: RunFinishReason;
  /** The final answer; for an aborted run, the text streamed so far in the last step. */
  readonly text: string;
  readonly steps: readonly StepSummary[];
  readonly usage: Usage;
  /** What the run's model calls cost, when the agent's model has a price. */
  readonly cost?: number;
  /**
   * The final answer parsed and validated against the run's `output` schema: present when
   * the run asked for structured output and finished with reason `stop`.
   */
  readonly output?: unknown;
  /**
   * What the model extractor of `memory.learn` used after the run, apart from `usage` (and
   * from the run's budgets, which it cannot make the run exceed); absent when it did not run.
   */
  readonly learning?: Usage;
}

/**
 * Everything a run reports, in order. Plain cloneable objects discriminated on `type`;
 * `step` counts model calls from 1.
 */
export type AgentEvent =
  | { readonly type: 'run-start'; readonly runId: string; readonly model: string }
  | { readonly type: 'step-start'; readonly step: number }
  | {
      /** The step's model call waits for the agent's rate limit; abort still ends the run at once. */
      readonly type: 'rate-limit-wait';
      readonly step: number;
      readonly waitMs: number;
      /** The bucket that is empty: requests or tokens per minute. */
      readonly limit: 'requests' | 'tokens';
    }
  | { readonly type: 'text-delta'; readonly step: number; readonly delta: string }
  | {
      /**
       * The model's reasoning as it streams: a reasoning summary (Responses API) or the
       * thinking an OpenAI-compatible server streams as `reasoning_content` / `reasoning`.
       * Kept with the step, never part of the answer.
       */
      readonly type: 'reasoning-delta';
      readonly step: number;
      readonly delta: string;
    }
  | {
      /**
       * A run asked for structured `output`: the JSON streamed so far in this step, parsed
       * as far as it goes (unclosed strings, arrays and objects closed). Not yet validated:
       * `run.result`'s `output` is the validated answer.
       */
      readonly type: 'output-delta';
      readonly step: number;
      readonly partial: unknown;
    }
  | {
      /**
       * An output guardrail rewrote the final answer: show `text` instead of the deltas
       * streamed in this step. The stored answer and `run-finish` carry `text`.
       */
      readonly type: 'text-rewrite';
      readonly step: number;
      readonly text: string;
      /** The guardrails that rewrote it, in order. */
      readonly guardrails: readonly string[];
    }
  | {
      readonly type: 'tool-call-start';
      readonly step: number;
      readonly callId: string;
      readonly toolName: string;
    }
  | {
      readonly type: 'tool-call-delta';
      readonly step: number;
      readonly callId: string;
      readonly argumentsDelta: string;
      /**
       * The arguments streamed so far, parsed as far as they go (unclosed strings, arrays and
       * objects closed), for a tool card to show fields as they arrive. Present on the first
       * delta and then whenever the text has grown enough to read it again; unvalidated.
       */
      readonly partialArguments?: unknown;
    }
  | {
      /** The complete call, once the model finished the response that made it. */
      readonly type: 'tool-call';
      readonly step: number;
      readonly callId: string;
      readonly toolName: string;
      /** The arguments as the model wrote them. */
      readonly argumentsText: string;
      /** The parsed arguments; absent when `argumentsText` is not JSON and could not be mended. */
      readonly arguments?: unknown;
      /** `argumentsText` was not valid JSON and `arguments` is what mending it gave. */
      readonly argumentsRepaired?: true;
    }
  | {
      /** The call waits for `run.approve(approvalId)` or `run.reject(approvalId, reason)`. */
      readonly type: 'approval-request';
      readonly step: number;
      /**
       * Names this request, and only it: generated by Airlock, never by the model, and
       * answered once. A resumed run asks again under a new id.
       */
      readonly approvalId: string;
      readonly callId: string;
      readonly toolName: string;
      readonly arguments: unknown;
      /**
       * Set when the flow policy asks (`untrustedToSink: 'approve'`): the labels the call
       * carries and the untrusted sources in the context, to show the user what is in play.
       */
      readonly flow?: CallFlow & { readonly sources: readonly FlowSource[] };
    }
  | {
      readonly type: 'tool-result';
      readonly step: number;
      readonly callId: string;
      readonly toolName: string;
      readonly durationMs: number;
      readonly ok: true;
      readonly output: unknown;
      /** Under a flow policy: the labels the call carried and the rule that decided it. */
      readonly flow?: CallFlow;
      /** A quarantined tool's extraction call (counted in the run's usage and budgets), when one was made. */
      readonly quarantine?: QuarantineCall;
    }
  | {
      readonly type: 'tool-result';
      readonly step: number;
      readonly callId: string;
      readonly toolName: string;
      readonly durationMs: number;
      readonly ok: false;
      readonly error: ToolErrorData;
      /** Under a flow policy: the labels the call carried and the rule that decided it. */
      readonly flow?: CallFlow;
      /** A quarantined tool's extraction call (counted in the run's usage and budgets), when one was made. */
      readonly quarantine?: QuarantineCall;
    }
  | {
      readonly type: 'step-finish';
      readonly step: number;
      readonly finishReason: FinishReason;
      readonly usage: Usage;
      /** What the step's model call cost, when the agent's model has a price. */
      readonly cost?: number;
      readonly durationMs: number;
    }
  | {
      /**
       * Knowledge chunks given to the model: put in the run's context before the first
       * step (`inject`), or returned by a `search_knowledge` call (`tool`). Best first.
       */
      readonly type: 'knowledge-used';
      readonly via: 'inject' | 'tool';
      readonly query: string;
      readonly sources: readonly KnowledgeSource[];
    }
  | {
      /**
       * `memory.learn` (a rule, or the model extractor: see `memory.source`) found a memory
       * in the finished run: `saved` (stored, with its id), or `proposed` (in confirm mode:
       * stored as a proposal the app accepts with `agent.memory.acceptProposal(event.proposalId)`
       * if the user agrees, or dismisses). Sent before `run-finish`.
       */
      readonly type: 'memory-learned';
      readonly status: 'saved';
      readonly memory: MemoryRecord;
    }
  | {
      readonly type: 'memory-learned';
      readonly status: 'proposed';
      readonly memory: MemoryInput;
      /** The stored proposal; absent when it could not be stored (a `storage-error` said why). */
      readonly proposalId?: string;
    }
  | {
      /**
       * The model extractor found a learnt memory wrong or obsolete: `deleted`, or
       * `proposed-delete` (accepted with `agent.memory.acceptProposal(event.proposalId)`,
       * which deletes it). `reason` is the extractor's, data to show, never instructions.
       */
      readonly type: 'memory-learned';
      readonly status: 'deleted';
      readonly memory: MemoryRecord;
      readonly reason: string;
    }
  | {
      readonly type: 'memory-learned';
      readonly status: 'proposed-delete';
      readonly memory: MemoryRecord;
      readonly reason: string;
      /** The stored proposal; absent when it could not be stored (a `storage-error` said why). */
      readonly proposalId?: string;
    }
  | {
      /** Saving the run failed (e.g. `storage-full`); the run goes on, and its result still arrives. */
      readonly type: 'storage-error';
      readonly error: ErrorData;
    }
  | {
      /** Something failed that the run survived (e.g. `summary-failed`); it goes on. */
      readonly type: 'warning';
      readonly code: WarningCode;
      readonly message: string;
      /** Structured facts for some codes (see `WarningCode`), e.g. the tools `mcp-tools-dropped` names. */
      readonly details?: Readonly<Record<string, unknown>>;
    }
  | ({ readonly type: 'run-finish' } & RunResult)
  | { readonly type: 'run-error'; readonly runId: string; readonly error: ErrorData }
  | {
      /**
       * The step's stream was cut by the network after it began: every `text-delta`,
       * `reasoning-delta`, `output-delta`, `tool-call-start` and `tool-call-delta` of this
       * `step` so far is void (drop them; none of its tool calls runs), and the step is asked
       * for again, after a `waiting-for-network` when the network is still down. `restart`
       * counts from 1; past 3 a step (or 6 a run) fails `model-stream-truncated`.
       */
      readonly type: 'step-restarted';
      readonly step: number;
      readonly reason: 'connection-lost';
      readonly restart: number;
    }
  | {
      /**
       * The model call waits for the network (`limits.networkWaitMs` at most) instead of
       * failing: the browser is `offline`, or the endpoint, which answered before, is
       * `unreachable`. Sent once per call; the run goes on when the network is back.
       */
      readonly type: 'waiting-for-network';
      readonly step: number;
      readonly reason: 'offline' | 'unreachable';
      readonly maxWaitMs: number;
    }
  | ({
      /**
       * The model router (`route([...])` as the worker's model) chose the route that answers
       * this step: `route` is its name, `passedOver` the routes before it that were not
       * eligible or failed first, each with its reason. Sent once per step, before the step's
       * first text, reasoning or tool call.
       */
      readonly type: 'model-route';
      readonly step: number;
    } & ModelRouteChoice)
  | ({
      /**
       * The step's model checks, downloads or loads its engine or weights before answering (an
       * on-device model: the Prompt API on the page, a WebAssembly engine): `phase`, and how
       * far (`fraction` 0..1, bytes where the engine counts them). Sent as the model tells it,
       * before the step's first text; `ready` last.
       */
      readonly type: 'model-load';
      readonly step: number;
    } & ModelLoadProgress);

/** The `type` names of all events. */
export type AgentEventType = AgentEvent['type'];
