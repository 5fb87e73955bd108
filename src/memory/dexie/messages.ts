import { revised } from '../conversation-revision';
import type { ConversationStore, MessageRecord } from '../store';
import { invalidInput, notFound } from '../store-failures';
import { type AirlockDatabase, type DexieConnection, messageRange } from './database';
import type { StepWriter } from './step-writer';

/** A conversation's messages: committing a step (through the store's step writer), reading them back, the summary. */
export function messageTables(
  connection: DexieConnection,
  writeStep: StepWriter,
): Pick<
  ConversationStore,
  'commitStep' | 'recentMessages' | 'messagesBetween' | 'listMessages' | 'updateSummary'
> {
  const { db, guard, notify } = connection;
  const { conversations, messages } = db;

  return {
    commitStep: writeStep,

    recentMessages: (conversationId, limit) =>
      guard('reading recent messages', () => newestComplete(db, conversationId, limit)),

    messagesBetween: (conversationId, fromSeq, toSeq) =>
      guard('reading messages', async () => {
        if (!(fromSeq < toSeq)) return [];
        return messages
          .where('[conversationId+status+seq]')
          .between(
            [conversationId, 'complete', fromSeq],
            [conversationId, 'complete', toSeq],
            false,
            true,
          )
          .toArray();
      }),

    listMessages: (conversationId) =>
      guard('listing messages', () => messageRange(db, conversationId).toArray()),

    updateSummary: (conversationId, summary, throughSeq) =>
      guard('saving a summary', async () => {
        await db.transaction('rw', conversations, async () => {
          const conversation = await conversations.get(conversationId);
          if (!conversation) throw notFound('conversation', conversationId);
          if (!Number.isInteger(throughSeq) || throughSeq < 0 || throughSeq > conversation.lastSeq)
            throw invalidInput(
              `A summary must cover messages up to a seq from 0 to ${conversation.lastSeq}, not ${throughSeq}.`,
            );
          await conversations.put(
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
  db: AirlockDatabase,
  conversationId: string,
  limit: number,
): Promise<MessageRecord[]> {
  if (!(limit > 0)) return [];
  const newestFirst = await db.messages
    .where('[conversationId+status+seq]')
    .between([conversationId, 'complete', 0], [conversationId, 'complete', Infinity])
    .reverse()
    .limit(limit)
    .toArray();
  return newestFirst.reverse();
}
