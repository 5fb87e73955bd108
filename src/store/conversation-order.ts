import type { ConversationListOptions, ConversationRecord } from '../protocol/memory';

// The order of the conversation list, as the IndexedDB store's `[updatedAt+id]` index keeps
// it: newest `updatedAt` first, then by id (code unit by code unit), last first.

/** Compares two conversations by their places in the list. */
export function newestFirst(a: ConversationRecord, b: ConversationRecord): number {
  return b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** Whether `row` comes after `after` in the list (every row does when there is no `after`). */
export function listedAfter(
  row: ConversationRecord,
  after: ConversationListOptions['after'],
): boolean {
  return (
    !after ||
    row.updatedAt < after.updatedAt ||
    (row.updatedAt === after.updatedAt && row.id < after.id)
  );
}
