import { isRunSealKey, newRunSealKey } from '../run-seal';
import type { ConversationStore } from '../store';
import type { DexieConnection } from './database';

/** The name of the run seal key's row. */
const RUN_SEAL_KEY = 'run-seal';

/** The key run rows are sealed with, in its own row (`sealKeys`). */
export function sealKeyTables(connection: DexieConnection): Pick<ConversationStore, 'runSealKey'> {
  const { db, guard } = connection;
  const { sealKeys } = db;

  return {
    runSealKey: () =>
      guard('reading the run seal key', async () => {
        const stored = (await sealKeys.get(RUN_SEAL_KEY))?.key;
        if (isRunSealKey(stored)) return stored;
        // Made outside the transaction, which cannot wait on crypto. Another worker may have
        // stored one meanwhile: the key stored first is every worker's.
        const made = await newRunSealKey();
        return db.transaction('rw', sealKeys, async () => {
          const first = (await sealKeys.get(RUN_SEAL_KEY))?.key;
          if (isRunSealKey(first)) return first;
          await sealKeys.put({ name: RUN_SEAL_KEY, key: made });
          return made;
        });
      }),
  };
}
