import { memoryChange } from '../memory-rules';
import { memoryToDelete } from '../proposal-target';
import type { ConversationStore, MemoryRecord } from '../store';
import { notFound } from '../store-failures';
import type { TableAdapter } from '../tables/table-adapter';
import { putMemory, reviseConversationOf } from './memories';
import { where } from './ranges';

/** What `memory.learn` holds for the app in confirm mode, until it is accepted or dismissed. */
export function proposalRules(
  adapter: TableAdapter,
): Pick<
  ConversationStore,
  'saveProposals' | 'listProposals' | 'acceptProposal' | 'dismissProposal'
> {
  const { guard, transaction, notify } = adapter;

  return {
    saveProposals: (rows) =>
      guard('saving memory proposals', async () => {
        const ids = new Set(rows.map((row) => row.conversationId));
        await transaction('rw', ['conversations', 'proposals'], async (tables) => {
          for (const id of ids)
            if ((await tables.get('conversations', id)) === undefined)
              throw notFound('conversation', id);
          await Promise.all(rows.map((row) => tables.add('proposals', row)));
        });
        notify(
          ...[...ids].map((conversationId) => ({ table: 'proposals' as const, conversationId })),
        );
      }),

    listProposals: ({ conversationId } = {}) =>
      guard('listing memory proposals', async () => {
        const rows = await transaction('r', ['proposals'], (tables) =>
          tables.getAll(
            'proposals',
            conversationId === undefined ? {} : where('conversationId', conversationId),
          ),
        );
        // Rows come in id order, which is the order of a run's proposals; rows are read as
        // stored, so a hostile `createdAt` sorts anywhere (and the caller leaves it out).
        return rows.sort((a, b) => Number(a.createdAt) - Number(b.createdAt));
      }),

    acceptProposal: (id, check, now = Date.now()) =>
      guard('accepting a memory proposal', async () => {
        const { proposal, saved, deleted } = await transaction(
          'rw',
          ['proposals', 'memories', 'conversations'],
          async (tables) => {
            const row = await tables.get('proposals', id);
            if (row === undefined) throw notFound('memory proposal', id);
            const proposal = check(row);
            let saved: MemoryRecord | undefined;
            let deleted: MemoryRecord | undefined;
            if (proposal.change === 'save') saved = await putMemory(tables, proposal.memory, now);
            else {
              deleted = memoryToDelete(proposal, await tables.get('memories', proposal.memory.id));
              if (deleted) {
                await tables.delete('memories', proposal.memory.id);
                await reviseConversationOf(tables, deleted.scope);
              }
            }
            await tables.delete('proposals', id);
            return { proposal, saved, deleted };
          },
        );
        const changed = saved ?? deleted;
        notify(
          { table: 'proposals', conversationId: proposal.conversationId },
          ...(changed ? [memoryChange(changed.scope)] : []),
        );
        return saved;
      }),

    dismissProposal: (id) =>
      guard('dismissing a memory proposal', async () => {
        const row = await transaction('rw', ['proposals'], async (tables) => {
          const found = await tables.get('proposals', id);
          if (found !== undefined) await tables.delete('proposals', id);
          return found;
        });
        if (row === undefined) return;
        const conversationId =
          typeof row.conversationId === 'string' ? row.conversationId : undefined;
        notify({ table: 'proposals', ...(conversationId ? { conversationId } : {}) });
      }),
  };
}
