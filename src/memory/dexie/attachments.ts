import type { AttachmentData, AttachmentRecord, ConversationStore } from '../store';
import { type DexieConnection, requested } from './database';

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
  const unique = uniqueByHash(added);
  const existing = await attachments.bulkGet(unique.map((item) => item.hash));
  await attachments.bulkPut(heldRows(conversationId, unique, existing));
}

/** `holdAttachments` in a native transaction over `attachments` (the step writer's). */
export async function holdAttachmentsIn(
  transaction: IDBTransaction,
  conversationId: string,
  added: readonly AttachmentData[],
): Promise<void> {
  if (added.length === 0) return;
  const store = transaction.objectStore('attachments');
  const unique = uniqueByHash(added);
  const existing = await Promise.all(
    unique.map((item) => requested<AttachmentRecord | undefined>(store.get(item.hash))),
  );
  for (const row of heldRows(conversationId, unique, existing)) store.put(row);
}

function uniqueByHash(added: readonly AttachmentData[]): AttachmentData[] {
  return [...new Map(added.map((item) => [item.hash, item])).values()];
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
