import { lazyMethods } from '../runtime/lazy-methods';
import { attachmentTables } from './dexie/attachments';
import { contextTables } from './dexie/context';
import { conversationTables } from './dexie/conversations';
import { type OpenStoreOptions, openConnection } from './dexie/database';
import { memoryTables } from './dexie/memories';
import { messageTables } from './dexie/messages';
import { runTables } from './dexie/runs';
import { stepWriter } from './dexie/step-writer';
import type { ConversationStore, WrittenStep } from './store';

export { DEFAULT_OPEN_TIMEOUT_MS, type OpenStoreOptions } from './dexie/database';

/**
 * Opens the IndexedDB-backed store (through Dexie, which only `dexie/database.ts` imports
 * at run time; the table modules in `dexie/` work through its connection). Nothing touches
 * the database until the first call. Every method is one transaction (`commitStep` and
 * `putRun` share theirs with the steps waiting beside them: `dexie/step-writer.ts`) and
 * rejects with an `AirlockError`; every successful write posts a `StoreChange` on the
 * `BroadcastChannel` `airlock:<name>`. An open blocked by an old tab fails `storage-blocked` after
 * `openTimeoutMs`; when another tab opens a newer schema version this store closes, so
 * that tab is not blocked, and later calls reject with `schema-changed`.
 */
export function openStore(options: OpenStoreOptions = {}): ConversationStore {
  const connection = openConnection(options);
  const stepListeners = new Set<(step: WrittenStep) => void>();
  const writeStep = stepWriter(connection, (step) => {
    for (const listener of stepListeners) listener(step);
  });
  return {
    ...conversationTables(connection),
    ...messageTables(connection, writeStep),
    ...contextTables(connection),
    ...runTables(connection, writeStep),
    ...memoryTables(connection),
    ...attachmentTables(connection),
    // Loaded with their first call: most agents never export or import.
    ...lazyMethods(['exportConversation', 'importConversation'], async () =>
      (await import('./dexie/conversation-transfer')).transferTables(connection),
    ),
    // Loaded with their first call: many agents never search or keep knowledge.
    ...lazyMethods(['searchConversations'], async () =>
      (await import('./dexie/search')).searchTables(connection),
    ),
    ...lazyMethods(
      [
        'putDocument',
        'deleteDocument',
        'listDocuments',
        'listVectorBlocks',
        'listVectorCodes',
        'getChunks',
      ],
      async () => (await import('./dexie/knowledge')).knowledgeTables(connection),
    ),
    // Read once per agent worker, when it starts.
    ...lazyMethods(['runSealKey'], async () =>
      (await import('./dexie/seal-keys')).sealKeyTables(connection),
    ),
    // Only confirm mode writes proposals, and only the memory API reads them.
    ...lazyMethods(
      ['saveProposals', 'listProposals', 'acceptProposal', 'dismissProposal'],
      async () => (await import('./dexie/proposals')).proposalTables(connection),
    ),
    onChange: connection.listen,
    onStepWritten(listener) {
      stepListeners.add(listener);
      return () => stepListeners.delete(listener);
    },
    close: () => connection.close(),
  };
}
