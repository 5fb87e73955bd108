import { estimateMessageTokens } from '../../model/estimate-tokens';
import type { ChatMessage } from '../../protocol/chat';
import { newConversation } from '../new-conversation';
import { messageTerms as searchTerms } from '../search-terms';
import type { ConversationStore, MessageRecord } from '../store';
import type { StoreChange } from '../store-change';
import { invalidInput, notFound } from '../store-failures';
import { holdAttachments } from './attachments';
import { type AirlockDatabase, type DexieConnection, messageRange, termRows } from './database';

/** A conversation's messages: committing a step (with its run and audit records), reading them back, the summary. */
export function messageTables(
  connection: DexieConnection,
): Pick<
  ConversationStore,
  'commitStep' | 'recentMessages' | 'messagesBetween' | 'listMessages' | 'updateSummary'
> {
  const { db, guard, notify } = connection;
  const { conversations, messages, runs, audit, attachments, messageTerms } = db;

  return {
    commitStep: (step) =>
      guard(
        'saving a step',
        async () => {
          const { conversationId, runId } = step;
          if (step.run !== undefined && step.run.conversationId !== conversationId)
            throw invalidInput(`Run "${step.run.id}" belongs to another conversation.`);
          if (step.audit?.some((record) => record.conversationId !== conversationId))
            throw invalidInput('An audit record belongs to another conversation.');
          const now = Date.now();
          // Worked out before the transaction, which stays open only for its reads and writes.
          const tokens = step.messages.map(estimateMessageTokens);
          const words = step.messages.map(searchTerms);
          const tables = [conversations, messages, runs, audit, attachments, messageTerms];
          const records = await db.transaction('rw', tables, async () => {
            // Created only by a new run's first commit: one deleted mid-run stays deleted.
            const stored = await conversations.get(conversationId);
            if (!stored && !step.create) throw notFound('conversation', conversationId);
            const conversation = stored ?? newConversation(conversationId, step.create?.title, now);
            const added = step.messages.map(
              (message: ChatMessage, index): MessageRecord => ({
                conversationId,
                seq: conversation.lastSeq + index + 1,
                runId,
                message,
                status: step.status ?? 'complete',
                approxTokens: tokens[index] ?? 0,
                at: now,
              }),
            );
            // Asked for at once: the transaction runs them in order, without a wait between
            // each and the next (one failure aborts them all).
            const terms = termRows(added, words);
            await Promise.all([
              added.length > 0 && messages.bulkAdd(added),
              terms.length > 0 && messageTerms.bulkAdd(terms),
              (added.length > 0 || !stored) &&
                conversations.put({
                  ...conversation,
                  lastSeq: conversation.lastSeq + added.length,
                  updatedAt: now,
                }),
              holdAttachments(connection, conversationId, step.attachments ?? []),
              step.run !== undefined && runs.put(step.run),
              step.audit !== undefined && step.audit.length > 0 && audit.bulkAdd([...step.audit]),
            ]);
            return { added, created: !stored };
          });
          const changes: StoreChange[] = [];
          if ((step.attachments?.length ?? 0) > 0)
            changes.push({ table: 'attachments', conversationId });
          if (records.added.length > 0) changes.push({ table: 'messages', conversationId });
          if (records.added.length > 0 || records.created)
            changes.push({ table: 'conversations', conversationId });
          if (step.run !== undefined) changes.push({ table: 'runs', conversationId });
          if (step.audit !== undefined && step.audit.length > 0)
            changes.push({ table: 'audit', conversationId });
          notify(...changes);
          return records.added;
        },
        'once',
      ),

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
          await conversations.put({ ...conversation, summary, summarizedThroughSeq: throughSeq });
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
