import { conversationScope } from '../memory-rules';
import { newConversation } from '../new-conversation';
import type { ConversationRecord, ConversationStore } from '../store';
import { cascadeChanges } from '../store-change';
import { invalidInput, notFound } from '../store-failures';
import { releaseAttachments } from './attachments';
import {
  type AirlockDatabase,
  type DexieConnection,
  messageRange,
  messageTermsRange,
  newestConversations,
  scopeRange,
} from './database';

/** Every table: what deleting or replacing a conversation writes, in one transaction. */
export function allTables({ db }: DexieConnection) {
  const { conversations, messages, memories, runs, audit, attachments, messageTerms, proposals } =
    db;
  return [conversations, messages, memories, runs, audit, attachments, messageTerms, proposals];
}

/**
 * Deletes a conversation and all that belongs to it; call inside a rw transaction over all
 * tables (`allTables`).
 */
export async function deleteCascade(
  connection: DexieConnection,
  conversationId: string,
): Promise<void> {
  const { db } = connection;
  await messageRange(db, conversationId).delete();
  await messageTermsRange(db, conversationId).delete();
  await db.runs.where('conversationId').equals(conversationId).delete();
  await db.audit.where('conversationId').equals(conversationId).delete();
  await db.proposals.where('conversationId').equals(conversationId).delete();
  await scopeRange(db, conversationScope(conversationId)).delete();
  await releaseAttachments(connection, conversationId);
  await db.conversations.delete(conversationId);
}

/**
 * Conversations as wholes: creating, listing, renaming and deleting (with all that belongs to
 * them). Exporting and importing load on use (`conversation-transfer.ts`).
 */
export function conversationTables(
  connection: DexieConnection,
): Pick<
  ConversationStore,
  | 'ensureConversation'
  | 'getConversation'
  | 'listConversations'
  | 'renameConversation'
  | 'deleteConversation'
> {
  const { db, guard, notify } = connection;
  const { conversations } = db;

  return {
    ensureConversation: (id, title) =>
      guard('creating a conversation', async () => {
        const { conversation, created } = await db.transaction('rw', conversations, () =>
          conversationRow(db, id, title),
        );
        if (created) notify({ table: 'conversations', conversationId: id });
        return conversation;
      }),

    getConversation: (id) => guard('reading a conversation', () => conversations.get(id)),

    listConversations: ({ limit, after } = {}) =>
      guard('listing conversations', () => {
        const newestFirst = newestConversations(db, after);
        return (limit === undefined ? newestFirst : newestFirst.limit(limit)).toArray();
      }),

    // Renaming and summarising leave `updatedAt` alone: it orders conversations by activity.
    renameConversation: (id, title) =>
      guard('renaming a conversation', async () => {
        const updated = await conversations.update(id, { title });
        if (updated === 0) throw notFound('conversation', id);
        notify({ table: 'conversations', conversationId: id });
      }),

    // Idempotent: deleting what another tab already deleted is not an error.
    deleteConversation: (id) =>
      guard('deleting a conversation', async () => {
        await db.transaction('rw', allTables(connection), () => deleteCascade(connection, id));
        notify(...cascadeChanges(id));
      }),
  };
}

/**
 * The conversation's row, added first if it is not stored; call inside a readwrite
 * transaction over `conversations`, and post the change once it commits if `created`.
 */
export async function conversationRow(
  db: AirlockDatabase,
  id: string,
  title?: string,
): Promise<{ conversation: ConversationRecord; created: boolean }> {
  if (typeof id !== 'string' || id === '')
    throw invalidInput('A conversation id must be a non-empty string.');
  const existing = await db.conversations.get(id);
  if (existing) return { conversation: existing, created: false };
  const conversation = newConversation(id, title, Date.now());
  await db.conversations.add(conversation);
  return { conversation, created: true };
}
