import { DEFAULT_DATABASE } from '../protocol/memory';
import { createStore } from './rules/create-store';
import type { ConversationStore } from './store';
import { memoryTables } from './tables/memory-tables';

/** Where the in-memory store posts its changes. */
export interface MemoryStoreOptions {
  /** Names the change channel (`airlock:<name>`), as the database it stands in for would. Default `airlock`. */
  readonly name?: string;
}

/**
 * A `ConversationStore` in memory, for browsers where IndexedDB cannot be opened (private
 * modes, disabled storage): the store's rules (`rules/`) over tables in memory
 * (`tables/memory-tables.ts`), so it behaves as the IndexedDB store does (the same unit
 * suites run against both) and keeps nothing once the agent is gone.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): ConversationStore {
  return createStore(memoryTables({ name: options.name ?? DEFAULT_DATABASE }));
}
