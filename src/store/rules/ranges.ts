import { conversationScope } from '../memory-rules';
import type { ConversationRecord, MemoryScope } from '../store';
import { type KeyQuery, only, startingWith, type TableName } from '../tables/table-adapter';

// The key ranges the rules read by, named for what they find.

/** Every table a conversation has rows in: what deleting or replacing one writes, in one transaction. */
export const CONVERSATION_TABLES: readonly TableName[] = [
  'conversations',
  'messages',
  'memories',
  'runs',
  'audit',
  'attachments',
  'messageTerms',
  'proposals',
];

/** A conversation's messages (or their search rows, keyed alike), by seq. */
export const messagesOf = (conversationId: string): KeyQuery => ({
  range: startingWith(conversationId),
});

/** The rows whose `index` is `key`. */
export const where = (index: string, key: IDBValidKey): KeyQuery => ({ index, range: only(key) });

/** The memories of one scope, by key. */
export const scopeOf = (scope: MemoryScope | string): KeyQuery => ({
  index: '[scope+key]',
  range: startingWith(scope),
});

/** The memories of conversations' own scopes (`conversation:<id>`), whatever the id. */
export const conversationScopes = (): KeyQuery => ({
  index: '[scope+key]',
  // ';' follows ':': every scope that starts with `conversation:` sorts between the two.
  range: { lower: [conversationScope('')], upper: ['conversation;'], upperOpen: true },
});

/**
 * Conversations newest first: by `updatedAt`, then by id (each conversation has a place of
 * its own in the list), from the one after `after` when given.
 */
export const newestConversations = (
  after?: Pick<ConversationRecord, 'id' | 'updatedAt'>,
  limit?: number,
): KeyQuery => ({
  index: '[updatedAt+id]',
  ...(after ? { range: { upper: [after.updatedAt, after.id], upperOpen: true } } : {}),
  reverse: true,
  ...(limit === undefined ? {} : { limit }),
});
