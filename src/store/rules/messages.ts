import { revised } from '../conversation-revision';
import type { ConversationStore, MessageRecord } from '../store';
import { invalidInput, notFound } from '../store-failures';
import type { TableAdapter, Tables } from '../tables/table-adapter';
import { messagesOf } from './ranges';
import type { StepWriter } from './step-writer';

/** A conversation's messages: committing a step (through the store's step writer), reading them back, the summary. */
export function messageRules(
  adapter: TableAdapter,
  writeStep: StepWriter,
): Pick<
  ConversationStore,
  | 'commitStep'
  | 'recentMessages'
  | 'messagesBetween'
  | 'listMessages'
  | 'updateSummary'
  | 'refuseRun'
> {
  const { guard, transaction, notify } = adapter;
  return {
    commitStep: writeStep,

    recentMessages: (conversationId, limit) =>
      guard('reading recent messages', () =>
        transaction('r', ['messages'], (tables) => newestComplete(tables, conversationId, limit)),
      ),

    messagesBetween: (conversationId, fromSeq, toSeq) =>
      guard('reading messages', async () => {
        if (!(fromSeq < toSeq)) return [];
        return transaction('r', ['messages'], (tables) =>
          tables.getAll('messages', {
            index: '[conversationId+status+seq]',
            range: {
              lower: [conversationId, 'complete', fromSeq],
              upper: [conversationId, 'complete', toSeq],
              lowerOpen: true,
            },
          }),
        );
      }),

    listMessages: (conversationId) =>
      guard('listing messages', () =>
        transaction('r', ['messages'], (tables) =>
          tables.getAll('messages', messagesOf(conversationId)),
        ),
      ),

    refuseRun: (conversationId, runId) =>
      guard('marking a refused turn', async () => {
        const seqs = await transaction('rw', ['messages', 'conversations'], async (tables) => {
          const conversation = await tables.get('conversations', conversationId);
          if (!conversation) return [];
          const rows = (await tables.getAll('messages', messagesOf(conversationId))).filter(
            (row) => row.runId === runId && row.status !== 'refused',
          );
          for (const row of rows) await tables.put('messages', { ...row, status: 'refused' });
          // What a context reads changed in place: kept contexts must not hold these rows.
          if (rows.length > 0) await tables.put('conversations', revised(conversation));
          return rows.map((row) => row.seq);
        });
        if (seqs.length > 0)
          notify({ table: 'messages', conversationId }, { table: 'conversations', conversationId });
        return seqs;
      }),

    updateSummary: (conversationId, summary, throughSeq) =>
      guard('saving a summary', async () => {
        await transaction('rw', ['conversations'], async (tables) => {
          const conversation = await tables.get('conversations', conversationId);
          if (!conversation) throw notFound('conversation', conversationId);
          if (!Number.isInteger(throughSeq) || throughSeq < 0 || throughSeq > conversation.lastSeq)
            throw invalidInput(
              `A summary must cover messages up to a seq from 0 to ${conversation.lastSeq}, not ${throughSeq}.`,
            );
          await tables.put(
            'conversations',
            revised({ ...conversation, summary, summarizedThroughSeq: throughSeq }),
          );
        });
        notify({ table: 'conversations', conversationId });
      }),
  };
}

/**
 * The newest `limit` complete messages, oldest first. Reads backwards along
 * [conversationId+status+seq] and stops after `limit` rows: the cost does not grow with the
 * length of the conversation.
 */
export async function newestComplete(
  tables: Tables,
  conversationId: string,
  limit: number,
): Promise<MessageRecord[]> {
  if (!(limit > 0)) return [];
  const newestFirst = await tables.getAll('messages', {
    index: '[conversationId+status+seq]',
    range: {
      lower: [conversationId, 'complete', 0],
      upper: [conversationId, 'complete', Infinity],
    },
    reverse: true,
    limit,
  });
  return newestFirst.reverse();
}
