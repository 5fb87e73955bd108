// The run's journal over the store: its input, each step, checkpoints, streamed text and its end.

import { isAirlockError, toErrorData } from '../../errors/airlock-error';
import type { RunUsage } from '../../protocol/budgets';
import type { ChatMessage, ChatToolCall } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import type { RunFlow } from '../../protocol/labels';
import type { ToolCallRecord } from '../../protocol/tools';
import type { AttachmentData, AuditRecord, ConversationStore, RunRecord } from '../../store/store';
import { type Cancel, later } from '../../timing/later';
import type { ResumedStep, RunJournal } from './loop-context';

/**
 * How often the text being streamed is saved: this long after a delta that found no save
 * pending, so a reload loses about this much of it. The saved text is shown, never replayed
 * (a resume streams the step again), so a second is enough; each save is a write of the
 * run's row, and a step answered within a second needs none (its text goes with the step).
 */
const PROGRESS_INTERVAL_MS = 1_000;

/** What a journal writes through: the store's step and checkpoint writes (which seal the run's row). */
export type JournalStore = Pick<ConversationStore, 'commitStep' | 'putRun' | 'refuseRun'>;

/**
 * Writes one run into the store: the input, each completed step with its audit records
 * (one transaction each; the step that answers also records the run finished), the text
 * being streamed (now and then), approval waits, and how the run ended. A failed write
 * does not stop the run: it is reported once as a `storage-error` event and the run goes
 * on in memory.
 */
export class ConversationJournal implements RunJournal {
  readonly #store: JournalStore;
  readonly #emit: (event: AgentEvent) => Promise<void>;
  readonly #audit: AuditRecord[] = [];
  #run: RunRecord;
  /** The current step's streamed text; kept apart so a delta costs a string append, not a record copy. */
  #partialText: string;
  /** The save of the streamed text due next, while a step streams. */
  #cancelProgressSave: Cancel | undefined;
  #reportedFailure = false;
  /** Set once a step's write recorded the run finished: ending it `finished` has nothing left to write. */
  #finishedWritten = false;
  readonly #signal: AbortSignal | undefined;

  /**
   * @param signal the run's signal: once it is aborted because the conversation was deleted
   * (`conversation-deleted`), nothing more is written, so nothing of the run outlives it.
   */
  constructor(
    store: JournalStore,
    run: RunRecord,
    emit: (event: AgentEvent) => Promise<void>,
    signal?: AbortSignal,
  ) {
    this.#store = store;
    this.#run = run;
    this.#partialText = run.partialText;
    this.#emit = emit;
    this.#signal = signal;
  }

  /**
   * Saves the run's input with its checkpoint, creating the conversation (titled `title`)
   * if the input is its first (`likelyNew`: the caller expects so), and removing the refused
   * turn of run `replacesRefused` in the same write (a retry). Resolves with the input's seq
   * (undefined when the write failed and was reported).
   */
  async started(
    input: ChatMessage,
    attachments: readonly AttachmentData[] = [],
    title?: string,
    likelyNew = false,
    replacesRefused?: string,
  ): Promise<number | undefined> {
    let seq: number | undefined;
    await this.#write(async () => {
      const [added] = await this.#store.commitStep({
        conversationId: this.#run.conversationId,
        runId: this.#run.id,
        messages: [input],
        run: this.#run,
        ...(attachments.length > 0 ? { attachments } : {}),
        create: { title, ...(likelyNew ? { likelyNew } : {}) },
        ...(replacesRefused === undefined ? {} : { replacesRefused }),
      });
      seq = added?.seq;
    });
    return seq;
  }

  /**
   * Observes the run's events to keep the streamed text of the current step, saved a second
   * after a delta (stalled or not, the stream's text so far is saved then).
   */
  observe(event: AgentEvent): void {
    if (event.type === 'step-start') {
      this.#stopProgressSaves();
      this.#partialText = '';
      this.#update({ step: event.step });
    } else if (event.type === 'step-restarted') {
      // The network cut the step: what it streamed is void, never kept as `interrupted`.
      this.#partialText = '';
    } else if (event.type === 'text-delta') {
      this.#partialText += event.delta;
      this.#cancelProgressSave ??= later(PROGRESS_INTERVAL_MS, () => {
        this.#cancelProgressSave = undefined;
        void this.#write(() => this.#store.putRun(this.#record()));
      });
    }
  }

  usageChanged(usage: RunUsage): void {
    this.#run = { ...this.#run, usage };
  }

  /** Keeps the run's labels; they are written with the next write (a step, a checkpoint). */
  flowChanged(flow: RunFlow): void {
    this.#run = { ...this.#run, flow };
  }

  /** Keeps what the run's side calls consumed; it is written with the next write. */
  sideUsageChanged(sideUsage: RunUsage): void {
    this.#run = { ...this.#run, sideUsage };
  }

  /** Writes the run's record once more after it ended, for a side call made since (the memory extractor). */
  async saveSideUsage(): Promise<void> {
    await this.#write(() => this.#store.putRun(this.#record()));
  }

  /** Collects a settled tool call for the audit log; it is written with its step. */
  audit(record: ToolCallRecord): void {
    this.#audit.push({ ...record, conversationId: this.#run.conversationId });
  }

  async stepCompleted(
    step: number,
    messages: readonly ChatMessage[],
    attachments: readonly AttachmentData[] = [],
    final = false,
  ): Promise<void> {
    this.#stopProgressSaves();
    const { pendingStep: _done, ...rest } = this.#run;
    this.#run = {
      ...rest,
      status: final ? 'finished' : 'running',
      step: step + 1,
      updatedAt: Date.now(),
    };
    this.#partialText = '';
    const audit = this.#audit.splice(0);
    const written = await this.#write(() =>
      this.#store.commitStep({
        conversationId: this.#run.conversationId,
        runId: this.#run.id,
        messages,
        run: this.#record(),
        audit,
        ...(attachments.length > 0 ? { attachments } : {}),
      }),
    );
    this.#finishedWritten = final && written;
  }

  async toolsRunning(pending: ResumedStep): Promise<void> {
    this.#run = {
      ...this.#run,
      status: 'running',
      updatedAt: Date.now(),
      pendingStep: {
        assistant: pending.assistant,
        settled: [...pending.settled],
        started: [...pending.started],
        awaiting: [],
      },
    };
    await this.#checkpoint();
  }

  async awaitingApproval(
    pending: ResumedStep & { readonly awaiting: readonly ChatToolCall[] },
  ): Promise<void> {
    this.#run = {
      ...this.#run,
      status: 'awaiting-approval',
      updatedAt: Date.now(),
      pendingStep: {
        assistant: pending.assistant,
        settled: [...pending.settled],
        started: [...pending.started],
        awaiting: pending.awaiting.map((call) => ({
          callId: call.id,
          toolName: call.function.name,
          arguments: call.function.arguments,
        })),
      },
    };
    await this.#checkpoint();
  }

  /**
   * Writes the step's checkpoint with the audit records of the calls settled so far, in one
   * transaction: a resume reuses those calls' results, so their records are never written again.
   */
  async #checkpoint(): Promise<void> {
    this.#stopProgressSaves();
    const audit = this.#audit.splice(0);
    await this.#write(() =>
      this.#store.commitStep({
        conversationId: this.#run.conversationId,
        runId: this.#run.id,
        messages: [],
        run: this.#record(),
        audit,
      }),
    );
  }

  /**
   * Ends the run. A finished run is marked so; one aborted or failed mid-step keeps the
   * text it had streamed as an `interrupted` message, shown but never replayed.
   */
  async ended(status: 'finished' | 'interrupted' | 'failed'): Promise<void> {
    this.#stopProgressSaves();
    if (status === 'finished' && this.#finishedWritten && this.#audit.length === 0) return;
    const partial = this.#partialText;
    const { pendingStep: _pending, ...rest } = this.#run;
    this.#run = { ...rest, status, updatedAt: Date.now() };
    const interrupted: ChatMessage[] =
      status !== 'finished' && partial ? [{ role: 'assistant', content: partial }] : [];
    await this.#write(() =>
      this.#store.commitStep({
        conversationId: this.#run.conversationId,
        runId: this.#run.id,
        messages: interrupted,
        status: 'interrupted',
        run: this.#record(),
        audit: this.#audit.splice(0),
      }),
    );
  }

  /**
   * Ends a run whose model request the endpoint refused for what it carried: failed, and
   * every message it stored (its input first) marked `refused`, shown but never sent again.
   * Answers the seqs marked (none when the write failed; that is reported as any write is).
   */
  async refused(): Promise<number[]> {
    await this.ended('failed');
    let seqs: number[] = [];
    await this.#write(async () => {
      seqs = await this.#store.refuseRun(this.#run.conversationId, this.#run.id);
    });
    return seqs;
  }

  /** The streamed text is written with what comes next (the step, its checkpoint or the run's end). */
  #stopProgressSaves(): void {
    this.#cancelProgressSave?.();
    this.#cancelProgressSave = undefined;
  }

  #conversationDeleted(): boolean {
    const reason: unknown = this.#signal?.reason;
    return isAirlockError(reason) && reason.code === 'conversation-deleted';
  }

  /** The checkpoint as it stands, with the text streamed so far. */
  #record(): RunRecord {
    return { ...this.#run, partialText: this.#partialText };
  }

  #update(patch: Partial<RunRecord>): void {
    this.#run = { ...this.#run, ...patch, updatedAt: Date.now() };
  }

  /** Writes, and says whether it did: a failure is reported (once) instead of thrown. */
  async #write(write: () => Promise<unknown>): Promise<boolean> {
    if (this.#conversationDeleted()) return false;
    try {
      await write();
      return true;
    } catch (error) {
      // The store fails with typed errors only; anything else is a bug and fails the run.
      if (!isAirlockError(error)) throw error;
      if (this.#reportedFailure || this.#conversationDeleted()) return false;
      this.#reportedFailure = true;
      await this.#emit({ type: 'storage-error', error: toErrorData(error) });
      return false;
    }
  }
}
