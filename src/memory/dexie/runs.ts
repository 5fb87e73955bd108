import type { ConversationStore } from '../store';
import type { DexieConnection } from './database';
import type { StepWriter } from './step-writer';

/** Run checkpoints and the tool-call audit log. */
export function runTables(
  connection: DexieConnection,
  writeStep: StepWriter,
): Pick<ConversationStore, 'putRun' | 'getRun' | 'listRuns' | 'listAudit'> {
  const { db, guard } = connection;
  const { runs, audit } = db;

  return {
    // A step with nothing but the checkpoint, so a progress write goes with the other runs'
    // steps. Conditional on the conversation, as every step is: a late progress write of a run
    // whose conversation was deleted must not bring back a `running` row that start-up would
    // then try to repair.
    putRun: async (run) => {
      await writeStep({ conversationId: run.conversationId, runId: run.id, messages: [], run });
    },

    getRun: (id) => guard('reading a run', () => runs.get(id)),

    listRuns: (listOptions = {}) =>
      guard('listing runs', async () => {
        const { conversationId, statuses } = listOptions;
        const found =
          conversationId !== undefined
            ? await runs.where('conversationId').equals(conversationId).toArray()
            : statuses !== undefined
              ? await runs
                  .where('status')
                  .anyOf([...statuses])
                  .toArray()
              : await runs.toArray();
        const kept =
          statuses === undefined ? found : found.filter((run) => statuses.includes(run.status));
        return kept.sort((a, b) => b.startedAt - a.startedAt || b.updatedAt - a.updatedAt);
      }),

    // Newest first is reverse insertion order: equal index keys are ordered by the primary key.
    listAudit: (listOptions = {}) =>
      guard('reading the audit log', async () => {
        const { conversationId, runId, limit } = listOptions;
        let collection =
          runId !== undefined
            ? audit.where('runId').equals(runId)
            : conversationId !== undefined
              ? audit.where('conversationId').equals(conversationId)
              : audit.toCollection();
        if (runId !== undefined && conversationId !== undefined)
          collection = collection.filter((record) => record.conversationId === conversationId);
        const newestFirst = collection.reverse();
        return limit === undefined ? newestFirst.toArray() : newestFirst.limit(limit).toArray();
      }),
  };
}
