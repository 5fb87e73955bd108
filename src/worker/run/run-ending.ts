// How a run ends: its record settled in the journal (finished, interrupted or failed), what it
// learnt from a final answer, and `run-finish`; a failure is thrown for the caller to report.
import { isAirlockError } from '../../errors/airlock-error';
import type { AgentEvent, RunResult } from '../../protocol/events';
import { loadChunk } from '../../runtime/load-chunk';
import type { RunRecord } from '../../store/store';
import type { ConversationJournal } from './conversation-journal';
import { inputRefused, refusedStatus } from './refused-request';
import { abortedRun } from './run-agent';
import type { RunOpening } from './run-opening';
import type { AgentSetup, RunScopes } from './run-setup';

/** What ending a run touches. */
export interface RunEnd {
  readonly setup: AgentSetup;
  readonly run: RunRecord;
  readonly journal: ConversationJournal;
  readonly scopes: RunScopes;
  readonly emit: (event: AgentEvent) => Promise<void>;
  readonly signal: AbortSignal;
}

/**
 * Ends a run whose loop returned: recorded finished (or interrupted, when aborted), then,
 * after a final answer, `memory.learn` run over it, then `run-finish`.
 */
export async function endReturnedRun(
  end: RunEnd,
  opening: Pick<RunOpening, 'rows' | 'sideCalls'>,
  result: RunResult,
): Promise<void> {
  const { setup, run, journal, emit, signal } = end;
  // A run stopped because its conversation was deleted fails with that reason: nothing is kept.
  if (result.reason === 'aborted' && isAirlockError(signal.reason)) throw signal.reason;
  await journal.ended(result.reason === 'aborted' ? 'interrupted' : 'finished');
  // Loaded on use: most agents do not learn.
  const learning =
    result.reason === 'stop' && setup.config.memory.learn
      ? await (
          await loadChunk('learn-memories', () => import('../learning/learn-memories'))
        ).learnMemories(
          setup,
          run,
          result.text,
          end.scopes,
          opening.rows,
          emit,
          opening.sideCalls,
          signal,
        )
      : undefined;
  if (learning) await journal.saveSideUsage();
  await emit({ type: 'run-finish', ...result, ...(learning ? { learning } : {}) });
}

/**
 * Ends a run that threw. Whatever an abort broke on its way (a summary call, a knowledge
 * search), the run was aborted: it ends as such, with what it had stored kept. An abort with
 * a reason of Airlock's own (its conversation was deleted), or any other failure, fails it
 * and throws `error` again. A model request the endpoint refused for what it carried (400,
 * 413) fails it too, with every message it stored marked `refused` (never sent again), and
 * throws `input-refused`.
 */
export async function endThrownRun(end: RunEnd, error: unknown): Promise<void> {
  const { run, journal, signal } = end;
  if (!signal.aborted || isAirlockError(signal.reason)) {
    const status = signal.aborted ? undefined : refusedStatus(error);
    if (status === undefined || !isAirlockError(error)) {
      await journal.ended('failed');
      throw error;
    }
    const seqs = await journal.refused();
    // Kept rows of this worker held the turn: the next run reads the conversation again.
    end.setup.contexts?.drop(run.conversationId);
    throw inputRefused(error, status, seqs);
  }
  await journal.ended('interrupted');
  await end.emit({ type: 'run-finish', ...abortedRun(run.id, run.conversationId) });
}
