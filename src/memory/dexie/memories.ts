import {
  checkMemoryPatch,
  compareMemories,
  isExpired,
  memoryChange,
  newMemoryId,
  normalizeMemoryInput,
} from '../memory-rules';
import type { ConversationStore, MemoryRecord, MemoryScope } from '../store';
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
  const { memories } = db;

  return {
    saveMemory: (input, now = Date.now()) =>
      guard('saving a memory', async () => {
        const memory = normalizeMemoryInput(input);
        const saved = await db.transaction('rw', memories, async () => {
          const existing = await memories
            .where('[scope+key]')
            .equals([memory.scope, memory.key])
            .first();
          const record: MemoryRecord = {
            ...memory,
            id: existing?.id ?? newMemoryId(),
            createdAt: existing?.createdAt ?? now,
            updatedAt: now,
          };
          await memories.put(record);
          return record;
        });
        notify(memoryChange(saved.scope));
        return saved;
      }),

    listMemories: (listOptions = {}) =>
      guard('listing memories', async () => {
        const found =
          listOptions.scopes === undefined
            ? await memories.toArray()
            : await db.transaction('r', memories, () =>
                scopedMemories(db, listOptions.scopes ?? []),
              );
        return applicable(found, listOptions.now ?? Date.now(), listOptions.includeExpired);
      }),

    updateMemory: (id, patch) =>
      guard('updating a memory', async () => {
        checkMemoryPatch(patch);
        const updated = await db.transaction('rw', memories, async () => {
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
          const record: MemoryRecord = { ...existing, ...patch, updatedAt: Date.now() };
          await memories.put(record);
          return record;
        });
        notify(memoryChange(updated.scope));
        return updated;
      }),

    deleteMemory: (id) =>
      guard('deleting a memory', async () => {
        const deleted = await db.transaction('rw', memories, async () => {
          const existing = await memories.get(id);
          if (existing) await memories.delete(id);
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

/** The memories of `scopes` (each scope once), as stored; call inside a transaction over `memories`. */
export async function scopedMemories(
  db: AirlockDatabase,
  scopes: readonly MemoryScope[],
): Promise<MemoryRecord[]> {
  const each = await Promise.all(
    [...new Set(scopes)].map((scope) => scopeRange(db, scope).toArray()),
  );
  return each.flat();
}

/** Memories as `listMemories` answers them: unexpired at `now` (unless asked), by importance then recency. */
export function applicable(
  found: MemoryRecord[],
  now: number,
  includeExpired = false,
): MemoryRecord[] {
  const kept = includeExpired ? found : found.filter((memory) => !isExpired(memory, now));
  return kept.sort(compareMemories);
}
