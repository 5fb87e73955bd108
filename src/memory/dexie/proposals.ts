import { memoryChange } from '../memory-rules';
import { memoryToDelete } from '../proposal-target';
import type { ConversationStore, MemoryRecord } from '../store';
import { notFound } from '../store-failures';
import type { DexieConnection } from './database';
import { putMemory, reviseConversationOf } from './memories';

/** What `memory.learn` holds for the app in confirm mode, until it is accepted or dismissed. */
export function proposalTables(
  connection: DexieConnection,
): Pick<
  ConversationStore,
  'saveProposals' | 'listProposals' | 'acceptProposal' | 'dismissProposal'
> {
  const { db, guard, notify } = connection;
  const { conversations, memories, proposals } = db;

  return {
    saveProposals: (rows) =>
      guard('saving memory proposals', async () => {
        const ids = new Set(rows.map((row) => row.conversationId));
        await db.transaction('rw', [conversations, proposals], async () => {
          for (const id of ids)
            if ((await conversations.get(id)) === undefined) throw notFound('conversation', id);
          await proposals.bulkAdd([...rows]);
        });
        notify(
          ...[...ids].map((conversationId) => ({ table: 'proposals' as const, conversationId })),
        );
      }),

    listProposals: ({ conversationId } = {}) =>
      guard('listing memory proposals', async () => {
        const rows =
          conversationId === undefined
            ? await proposals.toArray()
            : await proposals.where('conversationId').equals(conversationId).toArray();
        // Rows come in id order, which is the order of a run's proposals; rows are read as
        // stored, so a hostile `createdAt` sorts anywhere (and the caller leaves it out).
        return rows.sort((a, b) => Number(a.createdAt) - Number(b.createdAt));
      }),

    acceptProposal: (id, check, now = Date.now()) =>
      guard('accepting a memory proposal', async () => {
        const { proposal, saved, deleted } = await db.transaction(
          'rw',
          [proposals, memories, conversations],
          async () => {
            const row = await proposals.get(id);
            if (row === undefined) throw notFound('memory proposal', id);
            const proposal = check(row);
            let saved: MemoryRecord | undefined;
            let deleted: MemoryRecord | undefined;
            if (proposal.change === 'save') saved = await putMemory(db, proposal.memory, now);
            else {
              deleted = memoryToDelete(proposal, await memories.get(proposal.memory.id));
              if (deleted) {
                await memories.delete(proposal.memory.id);
                await reviseConversationOf(db, deleted.scope);
              }
            }
            await proposals.delete(id);
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
        const row = await db.transaction('rw', proposals, async () => {
          const found = await proposals.get(id);
          if (found !== undefined) await proposals.delete(id);
          return found;
        });
        if (row === undefined) return;
        const conversationId =
          typeof row.conversationId === 'string' ? row.conversationId : undefined;
        notify({ table: 'proposals', ...(conversationId ? { conversationId } : {}) });
      }),
  };
}
