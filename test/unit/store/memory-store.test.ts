import { vi } from 'vitest';

// The in-memory store stands in for IndexedDB when it cannot be opened, so it must behave as
// the Dexie store does: the store's own suites run here again against it.
vi.mock('./store-fixture', async (importOriginal) => {
  const original = await importOriginal<typeof import('./store-fixture')>();
  const { createMemoryStore } = await import('../../../src/store/memory-store');
  let counter = 0;
  return {
    ...original,
    freshStore: () => {
      counter += 1;
      const store = createMemoryStore({ name: `memory-test-${counter}` });
      // One store is one "database": another tab's view of it is the same store.
      return { store, name: `memory-test-${counter}`, indexedDB: undefined, reopen: () => store };
    },
  };
});

await import('./memories.test');
await import('./import-export.test');
await import('./dexie-store.test');
await import('./attachments.test');
await import('./search.test');
await import('./proposals.test');
await import('./drop-refused.test');
await import('./run-seal.test');
await import('./conversation-revision.test');
await import('./refused-turns.test');
