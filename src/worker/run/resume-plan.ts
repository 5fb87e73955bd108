// How a stored run goes on: its row's seal checked, where the resumed run starts, and the claim
// that keeps two resumes of one run from both going on.
import { AirlockError } from '../../errors/airlock-error';
import { readPendingStep, readRunRow } from '../../store/checkpoint-schema';
import type { RunSeal, SealVerdict } from '../../store/run-seal';
import type { ConversationStore, RunRecord } from '../../store/store';
import { interruptedMessages } from './interrupted-runs';
import type { ResumedStep } from './loop-context';
import type { RunStart } from './run-setup';

/** How a resumed run goes on: its record as it continues, and where it starts. */
export interface ResumePlan {
  readonly run: RunRecord;
  readonly start: RunStart;
}

/**
 * Plans the resume of a stored run: one waiting for approval finishes its step (asking
 * again); an interrupted one (the tab closed, the worker died, or it was aborted) finishes
 * the step its checkpoint holds (settled calls reused, calls that had started reported as
 * interrupted and never run again, the others run) or else streams the step after its
 * last committed one. A run still `running` whose conversation lock is free lost its
 * runner: it is marked interrupted first, under the lock. A row whose seal does not hold
 * (changed by anything but an agent worker of this database, copied, or stored before seals)
 * is refused with `run-not-resumable` and left as it is; so is anything else that cannot go
 * on. The plan is checked again under the conversation's lock (`claim`), so two
 * resumes of one run never both go on.
 */
export async function planResume(
  store: ConversationStore,
  runSeal: RunSeal,
  runId: string,
  allowedTools: readonly string[] | undefined,
): Promise<ResumePlan> {
  const stored = await readResumable(store, runSeal, runId);
  const narrowed = narrowAllowlist(stored.allowedTools, allowedTools);
  const withAllowlist: RunRecord = {
    ...stored,
    ...(narrowed === undefined ? {} : { allowedTools: narrowed }),
  };
  // A wait for approval always has a checkpoint: one without is a bad row (storage-failed).
  const resume =
    stored.pendingStep || stored.status === 'awaiting-approval' ? resumedStep(stored) : undefined;
  if (stored.status === 'awaiting-approval' && resume)
    return {
      run: withAllowlist,
      start: { resume, claim: () => claimUnchanged(store, runSeal, stored) },
    };
  // Interrupted: the streamed text was kept as an interrupted message (shown, never replayed).
  const run: RunRecord = { ...withAllowlist, status: 'running', partialText: '' };
  const claim = async () => {
    await claimUnchanged(store, runSeal, stored);
    // Said at once, so other tabs see the run going on; a runner that died first leaves its text.
    await store.commitStep({
      conversationId: run.conversationId,
      runId: run.id,
      messages: stored.status === 'running' ? interruptedMessages(stored) : [],
      status: 'interrupted',
      run: await runSeal.sealed({ ...run, updatedAt: Date.now() }),
    });
  };
  return {
    run,
    start: resume ? { resume, claim } : { continueAt: stored.step, claim },
  };
}

/** The step a run's checkpoint holds, checked (it was read back from IndexedDB). */
function resumedStep(run: RunRecord): ResumedStep {
  const pending = readPendingStep(run);
  return {
    step: run.step,
    assistant: pending.assistant,
    settled: pending.settled,
    started: pending.started ?? [],
  };
}

/**
 * The run's row, if a resume may go on from it: of a run's shape, sealed by an agent worker
 * of this database as it is (what the run may do is what it recorded), and not ended.
 */
async function readResumable(
  store: ConversationStore,
  runSeal: RunSeal,
  runId: string,
): Promise<RunRecord> {
  const run = readRunRow(await store.getRun(runId));
  if (!run) throw new AirlockError('not-found', `No run ${runId} is stored.`);
  if (run.status === 'finished' || run.status === 'failed')
    throw new AirlockError(
      'run-not-resumable',
      `The run ${runId} has ${run.status === 'finished' ? 'finished' : 'failed'}; only runs waiting for approval or interrupted go on.`,
      { details: { runId, status: run.status } },
    );
  if (run.caller === 'webmcp')
    throw new AirlockError(
      'run-not-resumable',
      `The run ${runId} made one tool call for an agent on the page (WebMCP), whose answer has nowhere to go now; it is never resumed.`,
      { details: { runId, status: run.status, reason: 'webmcp-caller' } },
    );
  const verdict = await runSeal.check(run);
  if (verdict !== 'sealed')
    throw new AirlockError('run-not-resumable', `The run ${runId} ${UNSEALED[verdict]}`, {
      details: { runId, status: run.status, reason: verdict },
    });
  return run;
}

/** Why a row whose seal does not hold is refused, after "The run <id>". */
const UNSEALED: Record<Exclude<SealVerdict, 'sealed'>, string> = {
  altered:
    'cannot be resumed: its stored row is not as its agent worker sealed it (it was changed, or copied from another run). It is kept as it is; start a new run.',
  unsealed:
    'cannot be resumed: its stored row carries no seal (it was stored by a version before run rows were sealed, or its seal was removed). It is kept as it is; start a new run.',
  uncheckable:
    'cannot be resumed here: its seal cannot be checked without crypto.subtle, which browsers give only to secure contexts (https: or localhost).',
};

/** Throws unless the run's row is as the plan read it (no other resume went on from it since). */
async function claimUnchanged(
  store: ConversationStore,
  runSeal: RunSeal,
  planned: RunRecord,
): Promise<void> {
  const now = await readResumable(store, runSeal, planned.id);
  if (
    now.status !== planned.status ||
    now.step !== planned.step ||
    now.updatedAt !== planned.updatedAt ||
    now.seal !== planned.seal
  )
    throw new AirlockError(
      'run-not-resumable',
      `The run ${planned.id} was resumed elsewhere meanwhile (it is ${now.status} now); resume it again if it still needs to go on.`,
      { details: { runId: planned.id, status: now.status } },
    );
}

/** What a resume may run: the stored allowlist, narrowed (never widened) by the one the resume asks for. */
function narrowAllowlist(
  stored: readonly string[] | undefined,
  requested: readonly string[] | undefined,
): readonly string[] | undefined {
  if (requested === undefined) return stored;
  if (stored === undefined) return requested;
  const allowed = new Set(stored);
  return requested.filter((name) => allowed.has(name));
}
