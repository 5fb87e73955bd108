import type { AttachmentData, ConversationStore } from '../store';
import type { DexieConnection } from './database';

/**
 * Stores attachments for a conversation: a new hash is added, a known one only gains the
 * conversation in its list. Call inside a rw transaction over `attachments`.
 */
export async function holdAttachments(
  connection: DexieConnection,
  conversationId: string,
  added: readonly AttachmentData[],
): Promise<void> {
  if (added.length === 0) return;
  const { attachments } = connection.db;
  const unique = [...new Map(added.map((item) => [item.hash, item])).values()];
  const existing = await attachments.bulkGet(unique.map((item) => item.hash));
  const rows = unique.map((item, index) => {
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
  await attachments.bulkPut(rows);
}

/**
 * Takes a conversation off every attachment it holds and deletes those no other
 * conversation holds. Call inside a rw transaction over `attachments`.
 */
export async function releaseAttachments(
  connection: DexieConnection,
  conversationId: string,
): Promise<void> {
  const { attachments } = connection.db;
  const held = await attachments.where('conversationIds').equals(conversationId).toArray();
  const orphaned: string[] = [];
  const kept = [];
  for (const row of held) {
    const others = row.conversationIds.filter((id) => id !== conversationId);
    if (others.length === 0) orphaned.push(row.hash);
    else kept.push({ ...row, conversationIds: others });
  }
  await attachments.bulkDelete(orphaned);
  await attachments.bulkPut(kept);
}

/** Reading attachments back. */
export function attachmentTables(
  connection: DexieConnection,
): Pick<ConversationStore, 'getAttachments'> {
  const { db, guard } = connection;
  return {
    getAttachments: (hashes) =>
      guard('reading attachments', () => db.attachments.bulkGet([...hashes])),
  };
}
