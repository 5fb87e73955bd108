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
import type { TableAdapter, Tables } from '../tables/table-adapter';
import { scopeOf } from './ranges';

/** Long-term memories, unique per scope and key. */
export function memoryRules(
  adapter: TableAdapter,
): Pick<
  ConversationStore,
  'saveMemory' | 'listMemories' | 'updateMemory' | 'deleteMemory' | 'pruneExpired'
> {
  const { guard, transaction, notify } = adapter;

  return {
    saveMemory: (input, now = Date.now()) =>
      guard('saving a memory', async () => {
        const saved = await transaction('rw', ['memories', 'conversations'], (tables) =>
          putMemory(tables, input, now),
        );
        notify(memoryChange(saved.scope));
        return saved;
      }),

    listMemories: (listOptions = {}) =>
      guard('listing memories', () =>
        transaction('r', ['memories'], (tables) => memoriesOf(tables, listOptions)),
      ),

    updateMemory: (id, patch, check = (row) => row as MemoryRecord) =>
      guard('updating a memory', async () => {
        checkMemoryPatch(patch);
        const updated = await transaction('rw', ['memories', 'conversations'], async (tables) => {
          const existing = await tables.get('memories', id);
          if (!existing) throw notFound('memory', id);
          if (patch.key !== undefined && patch.key !== existing.key) {
            const clash = await tables.count('memories', {
              index: '[scope+key]',
              range: { lower: [existing.scope, patch.key], upper: [existing.scope, patch.key] },
            });
            if (clash)
              throw invalidInput(
                `A memory with key "${patch.key}" already exists in scope "${existing.scope}".`,
              );
          }
          const record = check({ ...existing, ...patch, updatedAt: Date.now() });
          await tables.put('memories', record);
          await reviseConversationOf(tables, record.scope);
          return record;
        });
        notify(memoryChange(updated.scope));
        return updated;
      }),

    deleteMemory: (id) =>
      guard('deleting a memory', async () => {
        const deleted = await transaction('rw', ['memories', 'conversations'], async (tables) => {
          const existing = await tables.get('memories', id);
          if (existing) {
            await tables.delete('memories', id);
            await reviseConversationOf(tables, existing.scope);
          }
          return existing;
        });
        if (!deleted) return;
        notify(memoryChange(deleted.scope));
      }),

    pruneExpired: (now = Date.now()) =>
      guard('pruning expired memories', async () => {
        const count = await transaction('rw', ['memories'], (tables) =>
          tables.deleteAll('memories', { index: 'expiresAt', range: { upper: now } }),
        );
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
  tables: Tables,
  input: MemoryInput,
  now: number,
): Promise<MemoryRecord> {
  const memory = normalizeMemoryInput(input);
  const [existing] = await tables.getAll('memories', {
    index: '[scope+key]',
    range: { lower: [memory.scope, memory.key], upper: [memory.scope, memory.key] },
    limit: 1,
  });
  const record: MemoryRecord = {
    ...memory,
    id: existing?.id ?? newMemoryId(),
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  await tables.put('memories', record);
  await reviseConversationOf(tables, record.scope);
  return record;
}

/**
 * Gives the conversation a memory of `scope` belongs to a new revision token, if it is
 * stored: its context changed. Call inside a rw transaction over `conversations`.
 */
export async function reviseConversationOf(tables: Tables, scope: unknown): Promise<void> {
  const conversationId = conversationOfScope(scope);
  if (conversationId === undefined) return;
  const row = await tables.get('conversations', conversationId);
  if (row) await tables.put('conversations', revised(row));
}

/** The memories `listMemories` lists; call inside a transaction over `memories`. */
export async function memoriesOf(
  tables: Tables,
  options: Parameters<ConversationStore['listMemories']>[0] = {},
): Promise<MemoryRecord[]> {
  const now = options.now ?? Date.now();
  const scopes = options.scopes === undefined ? undefined : [...new Set(options.scopes)];
  const found =
    scopes === undefined
      ? await tables.getAll('memories')
      : (
          await Promise.all(scopes.map((scope) => tables.getAll('memories', scopeOf(scope))))
        ).flat();
  const kept = options.includeExpired ? found : found.filter((memory) => !isExpired(memory, now));
  return kept.sort(compareMemories);
}
