import type { ConversationStore, RunRecord } from '../memory/store';

/**
 * Marks a run left `running` by a tab that is gone as interrupted, keeping the text it had
 * streamed as an interrupted message, so any tab can resume it. Only call it while the
 * conversation's lock is free or held by the caller: a live run holds it.
 */
export async function markRunInterrupted(store: ConversationStore, run: RunRecord): Promise<void> {
  await store.commitStep({
    conversationId: run.conversationId,
    runId: run.id,
    messages: run.partialText ? [{ role: 'assistant', content: run.partialText }] : [],
    status: 'interrupted',
    run: { ...run, status: 'interrupted', updatedAt: Date.now() },
  });
}
