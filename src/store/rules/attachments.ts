import type { AttachmentData, AttachmentRecord, ConversationStore } from '../store';
import type { TableAdapter, Tables } from '../tables/table-adapter';
import { where } from './ranges';

/**
 * Stores attachments for a conversation: a new hash is added, a known one only gains the
 * conversation in its list. Call inside a rw transaction over `attachments`.
 */
export async function holdAttachments(
  tables: Tables,
  conversationId: string,
  added: readonly AttachmentData[],
): Promise<void> {
  if (added.length === 0) return;
  const unique = [...new Map(added.map((item) => [item.hash, item])).values()];
  const existing = await Promise.all(unique.map((item) => tables.get('attachments', item.hash)));
  for (const row of heldRows(conversationId, unique, existing)) void tables.put('attachments', row);
}

/** The rows of `unique` once `conversationId` holds them, from the rows stored (`existing`, in order). */
function heldRows(
  conversationId: string,
  unique: readonly AttachmentData[],
  existing: readonly (AttachmentRecord | undefined)[],
): AttachmentRecord[] {
  return unique.map((item, index) => {
    const row = existing[index];
    // Ids from a stored row are read as given: a row written by anything is kept usable.
    const holders = Array.isArray(row?.conversationIds) ? row.conversationIds : [];
    return {
      hash: item.hash,
      mediaType: item.mediaType,
      size: item.size,
      bytes: item.bytes,
      conversationIds: holders.includes(conversationId) ? holders : [...holders, conversationId],
    };
  });
}

/**
 * Takes a conversation off every attachment it holds and deletes those no other
 * conversation holds. Call inside a rw transaction over `attachments`.
 */
export async function releaseAttachments(tables: Tables, conversationId: string): Promise<void> {
  const held = await tables.getAll('attachments', where('conversationIds', conversationId));
  for (const row of held) {
    const others = row.conversationIds.filter((id) => id !== conversationId);
    if (others.length === 0) void tables.delete('attachments', row.hash);
    else void tables.put('attachments', { ...row, conversationIds: others });
  }
}

/** Reading attachments back. */
export function attachmentRules(adapter: TableAdapter): Pick<ConversationStore, 'getAttachments'> {
  const { guard, transaction } = adapter;
  return {
    getAttachments: (hashes) =>
      guard('reading attachments', () =>
        transaction('r', ['attachments'], (tables) =>
          Promise.all(hashes.map((hash) => tables.get('attachments', hash))),
        ),
      ),
  };
}
