import { conversationScope } from '../memory-rules';
import { newConversation } from '../new-conversation';
import type { ConversationRecord, ConversationStore } from '../store';
import { cascadeChanges } from '../store-change';
import { invalidInput, notFound } from '../store-failures';
import type { TableAdapter, Tables } from '../tables/table-adapter';
import { releaseAttachments } from './attachments';
import { CONVERSATION_TABLES, messagesOf, newestConversations, scopeOf, where } from './ranges';

/**
 * Deletes a conversation and all that belongs to it; call inside a rw transaction over
 * `CONVERSATION_TABLES`.
 */
export async function deleteCascade(tables: Tables, conversationId: string): Promise<void> {
  await tables.deleteAll('messages', messagesOf(conversationId));
  await tables.deleteAll('messageTerms', messagesOf(conversationId));
  await tables.deleteAll('runs', where('conversationId', conversationId));
  await tables.deleteAll('audit', where('conversationId', conversationId));
  await tables.deleteAll('proposals', where('conversationId', conversationId));
  await tables.deleteAll('memories', scopeOf(conversationScope(conversationId)));
  await releaseAttachments(tables, conversationId);
  await tables.delete('conversations', conversationId);
}

/**
 * Conversations as wholes: creating, listing, renaming and deleting (with all that belongs to
 * them). Exporting and importing load on use (`conversation-transfer.ts`).
 */
export function conversationRules(
  adapter: TableAdapter,
): Pick<
  ConversationStore,
  | 'ensureConversation'
  | 'getConversation'
  | 'listConversations'
  | 'renameConversation'
  | 'deleteConversation'
> {
  const { guard, transaction, notify } = adapter;
  return {
    ensureConversation: (id, title) =>
      guard('creating a conversation', async () => {
        const { conversation, created } = await transaction('rw', ['conversations'], (tables) =>
          conversationRow(tables, id, title),
        );
        if (created) notify({ table: 'conversations', conversationId: id });
        return conversation;
      }),

    getConversation: (id) =>
      guard('reading a conversation', () =>
        transaction('r', ['conversations'], (tables) => tables.get('conversations', id)),
      ),

    listConversations: ({ limit, after } = {}) =>
      guard('listing conversations', () =>
        transaction('r', ['conversations'], (tables) =>
          tables.getAll('conversations', newestConversations(after, limit)),
        ),
      ),

    // Renaming and summarising leave `updatedAt` alone: it orders conversations by activity.
    renameConversation: (id, title) =>
      guard('renaming a conversation', async () => {
        await transaction('rw', ['conversations'], async (tables) => {
          const row = await tables.get('conversations', id);
          if (!row) throw notFound('conversation', id);
          await tables.put('conversations', { ...row, title });
        });
        notify({ table: 'conversations', conversationId: id });
      }),

    // Idempotent: deleting what another tab already deleted is not an error.
    deleteConversation: (id) =>
      guard('deleting a conversation', async () => {
        await transaction('rw', CONVERSATION_TABLES, (tables) => deleteCascade(tables, id));
        notify(...cascadeChanges(id));
      }),
  };
}

/**
 * The conversation's row, added first if it is not stored; call inside a readwrite
 * transaction over `conversations`, and post the change once it commits if `created`.
 */
export async function conversationRow(
  tables: Tables,
  id: string,
  title?: string,
): Promise<{ conversation: ConversationRecord; created: boolean }> {
  if (typeof id !== 'string' || id === '')
    throw invalidInput('A conversation id must be a non-empty string.');
  const existing = await tables.get('conversations', id);
  if (existing) return { conversation: existing, created: false };
  const conversation = newConversation(id, title, Date.now());
  await tables.add('conversations', conversation);
  return { conversation, created: true };
}
