import { estimateMessageTokens } from '../../model/estimate-tokens';
import {
  exportedAttachments,
  hasParts,
  readImportedAttachments,
  referencedHashes,
} from '../conversation-attachments';
import { revised, withoutRevision } from '../conversation-revision';
import { conversationScope } from '../memory-rules';
import { newConversation } from '../new-conversation';
import type { ConversationExport, ConversationRecord, ConversationStore } from '../store';
import { cascadeChanges } from '../store-change';
import { invalidInput, notFound } from '../store-failures';
import { holdAttachments, releaseAttachments } from './attachments';
import {
  type AirlockDatabase,
  type DexieConnection,
  messageRange,
  messageTermsRange,
  newestConversations,
  scopeRange,
  termRows,
} from './database';

/**
 * Conversations as wholes: creating, listing, renaming, deleting (with all that belongs to
 * them), exporting and importing.
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
  | 'exportConversation'
  | 'importConversation'
> {
  const { db, guard, notify } = connection;
  const { conversations, messages, memories, runs, audit, attachments, messageTerms, proposals } =
    db;
  const allTables = [
    conversations,
    messages,
    memories,
    runs,
    audit,
    attachments,
    messageTerms,
    proposals,
  ];

  /** Deletes a conversation and all that belongs to it; call inside a rw transaction over all tables. */
  async function deleteCascade(conversationId: string): Promise<void> {
    await messageRange(db, conversationId).delete();
    await messageTermsRange(db, conversationId).delete();
    await runs.where('conversationId').equals(conversationId).delete();
    await audit.where('conversationId').equals(conversationId).delete();
    await proposals.where('conversationId').equals(conversationId).delete();
    await scopeRange(db, conversationScope(conversationId)).delete();
    await releaseAttachments(connection, conversationId);
    await conversations.delete(conversationId);
  }

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
        await db.transaction('rw', allTables, () => deleteCascade(id));
        notify(...cascadeChanges(id));
      }),

    exportConversation: (id) =>
      guard('exporting a conversation', () =>
        db.transaction(
          'r',
          [conversations, messages, memories, attachments],
          async (): Promise<ConversationExport> => {
            const conversation = await conversations.get(id);
            if (!conversation) throw notFound('conversation', id);
            const records = await messageRange(db, id).toArray();
            const memoryRows = await scopeRange(db, conversationScope(id)).toArray();
            if (!hasParts(records))
              return {
                format: 'airlock.conversation',
                version: 1,
                conversation: withoutRevision(conversation),
                messages: records,
                memories: memoryRows,
              };
            const rows = await attachments.bulkGet(referencedHashes(records));
            return {
              format: 'airlock.conversation',
              version: 2,
              conversation: withoutRevision(conversation),
              messages: records,
              memories: memoryRows,
              attachments: exportedAttachments(rows),
            };
          },
        ),
      ),

    importConversation: (data, importOptions = {}) =>
      guard(
        'importing a conversation',
        async () => {
          // Everything is checked before the transaction, so bad input never starts a write.
          // The export's schema loads on the first import: most agents never import.
          const { parseConversationExport } = await import('../conversation-export-schema');
          const value = parseConversationExport(data, importOptions);
          // Hashed and type-checked before the transaction, which cannot wait on crypto.
          const imported = await readImportedAttachments(value);
          const { id } = value.conversation;
          // Token counts are derived data: recomputed, not taken from the file.
          const records = value.messages.map((record) => ({
            ...record,
            approxTokens: estimateMessageTokens(record.message),
          }));
          const terms = termRows(records);
          await db.transaction('rw', allTables, async () => {
            const existing = await conversations.get(id);
            if (existing && importOptions.replace !== true)
              throw invalidInput(
                `A conversation with id "${id}" exists; import with \`replace: true\` to replace it.`,
              );
            const clashes = await memories.bulkGet(value.memories.map((memory) => memory.id));
            const foreign = clashes.find(
              (memory) => memory !== undefined && memory.scope !== conversationScope(id),
            );
            if (foreign)
              throw invalidInput(
                `Memory id "${foreign.id}" already belongs to scope "${foreign.scope}".`,
              );
            // Replacing is deleting and importing in one transaction: a failure keeps the old one.
            // Without a conversation row, this clears leftovers filed under its id (memories
            // saved to its scope), which would otherwise clash with the imported keys.
            await deleteCascade(id);
            await messages.bulkAdd(records);
            await messageTerms.bulkAdd(terms);
            await memories.bulkAdd([...value.memories]);
            await holdAttachments(connection, id, imported);
            // A token of its own: a context kept of the conversation it replaces is stale.
            await conversations.add(revised(value.conversation));
          });
          notify(...cascadeChanges(id));
          return value.conversation;
        },
        'once',
      ),
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
