// Runs left `running` by a tab that is gone: marked interrupted, keeping the text they streamed.
import type { RunSeal } from '../../store/run-seal';
import type { ConversationStore, RunRecord } from '../../store/store';

/**
 * Marks a run left `running` by a tab that is gone as interrupted, keeping the text it had
 * streamed as an interrupted message, so any tab can resume it. The row is sealed again only
 * if its seal held: a row another writer changed stays refused. Only call it while the
 * conversation's lock is free or held by the caller: a live run holds it.
 */
export async function markRunInterrupted(
  store: ConversationStore,
  runSeal: RunSeal,
  run: RunRecord,
): Promise<void> {
  await store.commitStep({
    conversationId: run.conversationId,
    runId: run.id,
    messages: interruptedMessages(run),
    status: 'interrupted',
    run: await runSeal.amended(run, { status: 'interrupted', updatedAt: Date.now() }),
  });
}

/**
 * What a run cut short leaves in the conversation: the text it had streamed, as an
 * interrupted message. None when its step's checkpoint holds that text (the resume
 * stores it with the step).
 */
export function interruptedMessages(
  run: RunRecord,
): { readonly role: 'assistant'; readonly content: string }[] {
  return run.partialText && !run.pendingStep
    ? [{ role: 'assistant', content: run.partialText }]
    : [];
}
