import { type OpenStoreOptions, openConnection } from './dexie/database';
import { createStore } from './rules/create-store';
import type { ConversationStore } from './store';
import { indexedDbTables } from './tables/indexeddb-tables';

export { DEFAULT_OPEN_TIMEOUT_MS, type OpenStoreOptions } from './dexie/database';

/**
 * Opens the IndexedDB-backed store: the store's rules (`rules/`) over the IndexedDB tables
 * (`tables/indexeddb-tables.ts`; Dexie, which only `dexie/database.ts` imports, opens and
 * upgrades the database). Nothing touches the database until the first call. Every
 * successful write posts a `StoreChange` on the `BroadcastChannel` `airlock:<name>`. An open
 * blocked by an old tab fails `storage-blocked` after `openTimeoutMs`; when another tab
 * opens a newer schema version this store closes, so that tab is not blocked, and later
 * calls reject with `schema-changed`.
 */
export function openStore(options: OpenStoreOptions = {}): ConversationStore {
  return createStore(indexedDbTables(openConnection(options)));
}
