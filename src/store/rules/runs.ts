import type { ConversationStore } from '../store';
import type { TableAdapter } from '../tables/table-adapter';
import { where } from './ranges';
import type { StepWriter } from './step-writer';

/** Run checkpoints and the tool-call audit log. */
export function runRules(
  adapter: TableAdapter,
  writeStep: StepWriter,
): Pick<ConversationStore, 'putRun' | 'getRun' | 'listRuns' | 'listAudit'> {
  const { guard, transaction } = adapter;
  return {
    // A step with nothing but the checkpoint, so a progress write goes with the other runs'
    // steps. Conditional on the conversation, as every step is: a late progress write of a run
    // whose conversation was deleted must not bring back a `running` row that start-up would
    // then try to repair.
    putRun: async (run) => {
      await writeStep({ conversationId: run.conversationId, runId: run.id, messages: [], run });
    },

    getRun: (id) =>
      guard('reading a run', () => transaction('r', ['runs'], (tables) => tables.get('runs', id))),

    listRuns: ({ conversationId, statuses } = {}) =>
      guard('listing runs', async () => {
        const found = await transaction('r', ['runs'], async (tables) =>
          conversationId !== undefined
            ? tables.getAll('runs', where('conversationId', conversationId))
            : statuses !== undefined
              ? (
                  await Promise.all(
                    [...new Set(statuses)].map((status) =>
                      tables.getAll('runs', where('status', status)),
                    ),
                  )
                ).flat()
              : tables.getAll('runs'),
        );
        const kept =
          statuses === undefined ? found : found.filter((run) => statuses.includes(run.status));
        return kept.sort((a, b) => b.startedAt - a.startedAt || b.updatedAt - a.updatedAt);
      }),

    // Newest first is reverse insertion order: equal index keys are ordered by the primary key.
    listAudit: ({ conversationId, runId, limit } = {}) =>
      guard('reading the audit log', () =>
        transaction('r', ['audit'], (tables) =>
          tables.getAll('audit', {
            ...(runId !== undefined
              ? where('runId', runId)
              : conversationId !== undefined
                ? where('conversationId', conversationId)
                : {}),
            ...(runId !== undefined && conversationId !== undefined
              ? { filter: (record) => record.conversationId === conversationId }
              : {}),
            reverse: true,
            ...(limit === undefined ? {} : { limit: Math.max(0, limit) }),
          }),
        ),
      ),
  };
}
