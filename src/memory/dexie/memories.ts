import { revised } from '../conversation-revision';
import {
  checkMemoryPatch,
  compareMemories,
  conversationOfScope,
  isExpired,
  memoryChange,
  newMemoryId,
  normalizeMemoryInput,
} from '../memory-rules';
import type { ConversationStore, MemoryInput, MemoryRecord } from '../store';
import { invalidInput, notFound } from '../store-failures';
import { type AirlockDatabase, type DexieConnection, scopeRange } from './database';

/** Long-term memories, unique per scope and key. */
export function memoryTables(
  connection: DexieConnection,
): Pick<
  ConversationStore,
  'saveMemory' | 'listMemories' | 'updateMemory' | 'deleteMemory' | 'pruneExpired'
> {
  const { db, guard, notify } = connection;
  const { memories, conversations } = db;

  return {
    saveMemory: (input, now = Date.now()) =>
      guard('saving a memory', async () => {
        const saved = await db.transaction('rw', [memories, conversations], () =>
          putMemory(db, input, now),
        );
        notify(memoryChange(saved.scope));
        return saved;
      }),

    listMemories: (listOptions = {}) =>
      guard('listing memories', () => memoriesOf(db, listOptions)),

    updateMemory: (id, patch, check = (row) => row as MemoryRecord) =>
      guard('updating a memory', async () => {
        checkMemoryPatch(patch);
        const updated = await db.transaction('rw', [memories, conversations], async () => {
          const existing = await memories.get(id);
          if (!existing) throw notFound('memory', id);
          if (patch.key !== undefined && patch.key !== existing.key) {
            const clash = await memories
              .where('[scope+key]')
              .equals([existing.scope, patch.key])
              .first();
            if (clash)
              throw invalidInput(
                `A memory with key "${patch.key}" already exists in scope "${existing.scope}".`,
              );
          }
          const record = check({ ...existing, ...patch, updatedAt: Date.now() });
          await memories.put(record);
          await reviseConversationOf(db, record.scope);
          return record;
        });
        notify(memoryChange(updated.scope));
        return updated;
      }),

    deleteMemory: (id) =>
      guard('deleting a memory', async () => {
        const deleted = await db.transaction('rw', [memories, conversations], async () => {
          const existing = await memories.get(id);
          if (existing) {
            await memories.delete(id);
            await reviseConversationOf(db, existing.scope);
          }
          return existing;
        });
        if (!deleted) return;
        notify(memoryChange(deleted.scope));
      }),

    pruneExpired: (now = Date.now()) =>
      guard('pruning expired memories', async () => {
        const count = await memories.where('expiresAt').belowOrEqual(now).delete();
        if (count > 0) notify({ table: 'memories' });
        return count;
      }),
  };
}

/**
 * Inserts or replaces (same scope and key) a memory, as `saveMemory` does; call inside a
 * rw transaction over `memories` and `conversations`. Throws `invalid-input` for a memory
 * the rules refuse.
 */
export async function putMemory(
  db: AirlockDatabase,
  input: MemoryInput,
  now: number,
): Promise<MemoryRecord> {
  const memory = normalizeMemoryInput(input);
  const existing = await db.memories
    .where('[scope+key]')
    .equals([memory.scope, memory.key])
    .first();
  const record: MemoryRecord = {
    ...memory,
    id: existing?.id ?? newMemoryId(),
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  await db.memories.put(record);
  await reviseConversationOf(db, record.scope);
  return record;
}

/**
 * Gives the conversation a memory of `scope` belongs to a new revision token, if it is
 * stored: its context changed. Call inside a rw transaction over `conversations`.
 */
export async function reviseConversationOf(db: AirlockDatabase, scope: unknown): Promise<void> {
  const conversationId = conversationOfScope(scope);
  if (conversationId === undefined) return;
  const row = await db.conversations.get(conversationId);
  if (row) await db.conversations.put(revised(row));
}

/** The memories `listMemories` lists; joins the transaction it is called in, if any. */
export async function memoriesOf(
  db: AirlockDatabase,
  options: Parameters<ConversationStore['listMemories']>[0] = {},
): Promise<MemoryRecord[]> {
  const now = options.now ?? Date.now();
  const scopes = options.scopes === undefined ? undefined : [...new Set(options.scopes)];
  const found =
    scopes === undefined
      ? await db.memories.toArray()
      : await db.transaction('r', db.memories, async () =>
          (await Promise.all(scopes.map((scope) => scopeRange(db, scope).toArray()))).flat(),
        );
  const kept = options.includeExpired ? found : found.filter((memory) => !isExpired(memory, now));
  return kept.sort(compareMemories);
}
