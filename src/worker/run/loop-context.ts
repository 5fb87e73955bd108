// What the agent loop is handed (`RunContext`), where it writes down what it did
// (`RunJournal`), and the step a resume finishes first (`ResumedStep`).

import type { ChatModel, ModelRequest } from '../../model/chat-model';
import type { TokenCalibration } from '../../model/estimate-tokens';
import type { AgentConfig } from '../../protocol/agent-config';
import type { RunUsage } from '../../protocol/budgets';
import type { ChatMessage, ChatToolCall } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import type { OutputRequest } from '../../protocol/wire';
import type { AttachmentData } from '../../store/store';
import type { BudgetMeter } from '../policy/budget-meter';
import type { Guardrails } from '../policy/guardrails';
import type { ToolCallsContext } from '../tools/run-tool-calls';
import type { OutputVerdict } from './event-sink';

export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
export type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/** A step whose tool calls were cut short (by a reload while waiting for approval), to finish first. */
export interface ResumedStep {
  readonly step: number;
  readonly assistant: AssistantMessage;
  /** Tool messages of calls already settled; the other calls run again (and ask again). */
  readonly settled: readonly ToolMessage[];
  /** Calls that began executing before the reload; those not settled are never run again. */
  readonly started: readonly string[];
}

/**
 * Where a run writes down what it did, so it survives the page. Each call is awaited
 * before the run goes on; none is made while a model or tool call is open.
 */
export interface RunJournal {
  /**
   * A completed step's messages (assistant, then its tool results in call order, then the
   * images its tools returned), with the attachments those refer to. `final` marks the
   * step that answers (no tool calls): the run is recorded finished with it, in the same
   * write.
   */
  stepCompleted(
    step: number,
    messages: readonly ChatMessage[],
    attachments?: readonly AttachmentData[],
    final?: boolean,
  ): Promise<void>;
  /**
   * The step's tools run: the step's response and each call as it starts and settles, so a
   * resume after a reload finishes the step without running a settled or started call again.
   */
  toolsRunning(pending: ResumedStep): Promise<void>;
  /** The step's calls wait for the user: what is needed to finish the step after a reload. */
  awaitingApproval(
    pending: ResumedStep & { readonly awaiting: readonly ChatToolCall[] },
  ): Promise<void>;
  /** What the run consumed so far; saved with the next write. */
  usageChanged(usage: RunUsage): void;
}

/** Everything one run needs; the run owns nothing it is handed. */
export interface RunContext {
  readonly runId: string;
  readonly conversationId: string;
  readonly config: AgentConfig;
  readonly model: ChatModel;
  /** The agent's token calibration, taught by each step's reported usage. */
  readonly tokens?: TokenCalibration;
  /** The run's model name and request fields, when it asked for its own. */
  readonly call?: Pick<ModelRequest, 'model' | 'options'>;
  /** The agent's tools and the run's allowlist, approvals and audit log. */
  readonly tools: Pick<ToolCallsContext, 'registry' | 'allowed' | 'approvals' | 'audit' | 'flow'>;
  /** The system message: the app's instructions and Airlock's fixed notices, nothing else. */
  readonly system: readonly ChatMessage[];
  /**
   * What is sent before this run's own messages: the data messages (memories, summary,
   * knowledge), the history window and the new input, last.
   */
  readonly history: readonly ChatMessage[];
  /**
   * Set when `system` and `history` were built from rows kept in the worker: settles once
   * the input's write has checked them, with the context to send instead when they were
   * out of date (see `openRun`).
   */
  readonly confirm?: Promise<Pick<RunContext, 'system' | 'history'> | undefined>;
  readonly journal: RunJournal;
  /** Counts what the run spends against its budgets and its conversation's. */
  readonly budget: BudgetMeter;
  /** The page's output and tool-argument guardrails. */
  readonly guardrails: Guardrails;
  /** Finish this step before streaming a new one. */
  readonly resume?: ResumedStep;
  /** The step an interrupted run goes on from (its earlier steps are in `history`); default 1. */
  readonly startStep?: number;
  /** The final answer must be JSON fitting this schema, as the page's `check` decides. */
  readonly output?: RunOutput;
  readonly signal: AbortSignal;
  readonly emit: (event: AgentEvent) => Promise<void>;
}

/** A run's structured output: the schema the model is given, and the page's check. */
export interface RunOutput extends OutputRequest {
  /** The page's verdict on a parsed answer; undefined when the run ended first. */
  readonly check: (value: unknown) => Promise<OutputVerdict | undefined>;
}
