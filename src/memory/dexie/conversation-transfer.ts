import { estimateMessageTokens } from '../../model/estimate-tokens';
import {
  exportedAttachments,
  hasParts,
  readImportedAttachments,
  referencedHashes,
} from '../conversation-attachments';
import { revised, withoutRevision } from '../conversation-revision';
import { conversationScope } from '../memory-rules';
import type { ConversationExport, ConversationStore } from '../store';
import { cascadeChanges } from '../store-change';
import { invalidInput, notFound } from '../store-failures';
import { holdAttachments } from './attachments';
import { allTables, deleteCascade } from './conversations';
import { type DexieConnection, messageRange, scopeRange, termRows } from './database';

/** Exporting and importing conversations: loaded with the first call, as most agents do neither. */
export function transferTables(
  connection: DexieConnection,
): Pick<ConversationStore, 'exportConversation' | 'importConversation'> {
  const { db, guard, notify } = connection;
  const { conversations, messages, memories, attachments, messageTerms } = db;

  return {
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
          await db.transaction('rw', allTables(connection), async () => {
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
            await deleteCascade(connection, id);
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
