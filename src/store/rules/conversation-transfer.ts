import { estimateMessageTokens } from '../../model/estimate-tokens';
import { loadChunk } from '../../runtime/load-chunk';
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
import type { TableAdapter } from '../tables/table-adapter';
import { holdAttachments } from './attachments';
import { deleteCascade } from './conversations';
import { termRows } from './message-terms';
import { CONVERSATION_TABLES, messagesOf, scopeOf } from './ranges';

/** Exporting and importing conversations: loaded with the first call, as most agents do neither. */
export function transferRules(
  adapter: TableAdapter,
): Pick<ConversationStore, 'exportConversation' | 'importConversation'> {
  const { guard, transaction, notify } = adapter;

  return {
    exportConversation: (id) =>
      guard('exporting a conversation', () =>
        transaction(
          'r',
          ['conversations', 'messages', 'memories', 'attachments'],
          async (tables): Promise<ConversationExport> => {
            const conversation = await tables.get('conversations', id);
            if (!conversation) throw notFound('conversation', id);
            const records = await tables.getAll('messages', messagesOf(id));
            const memoryRows = await tables.getAll('memories', scopeOf(conversationScope(id)));
            if (!hasParts(records))
              return {
                format: 'airlock.conversation',
                version: 1,
                conversation: withoutRevision(conversation),
                messages: records,
                memories: memoryRows,
              };
            const rows = await Promise.all(
              referencedHashes(records).map((hash) => tables.get('attachments', hash)),
            );
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
          const { parseConversationExport } = await loadChunk(
            'conversation-export-schema',
            () => import('../conversation-export-schema'),
          );
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
          await transaction('rw', CONVERSATION_TABLES, async (tables) => {
            const existing = await tables.get('conversations', id);
            if (existing && importOptions.replace !== true)
              throw invalidInput(
                `A conversation with id "${id}" exists; import with \`replace: true\` to replace it.`,
              );
            const clashes = await Promise.all(
              value.memories.map((memory) => tables.get('memories', memory.id)),
            );
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
            await deleteCascade(tables, id);
            for (const record of records) void tables.add('messages', record);
            for (const row of terms) void tables.add('messageTerms', row);
            for (const memory of value.memories) void tables.add('memories', memory);
            await holdAttachments(tables, id, imported);
            // A token of its own: a context kept of the conversation it replaces is stale.
            await tables.add('conversations', revised(value.conversation));
          });
          notify(...cascadeChanges(id));
          return value.conversation;
        },
        'once',
      ),
  };
}
