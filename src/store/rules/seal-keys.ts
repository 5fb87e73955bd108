import { isRunSealKey, newRunSealKey } from '../run-seal';
import type { ConversationStore } from '../store';
import type { TableAdapter } from '../tables/table-adapter';

/** The name of the run seal key's row. */
const RUN_SEAL_KEY = 'run-seal';

/** The key run rows are sealed with, in its own row (`sealKeys`). */
export function sealKeyRules(adapter: TableAdapter): Pick<ConversationStore, 'runSealKey'> {
  const { guard, transaction } = adapter;
  return {
    runSealKey: () =>
      guard('reading the run seal key', async () => {
        const stored = await transaction('r', ['sealKeys'], (tables) =>
          tables.get('sealKeys', RUN_SEAL_KEY),
        );
        if (isRunSealKey(stored?.key)) return stored.key;
        // Made outside the transaction, which cannot wait on crypto. Another worker may have
        // stored one meanwhile: the key stored first is every worker's.
        const made = await newRunSealKey();
        return transaction('rw', ['sealKeys'], async (tables) => {
          const first = (await tables.get('sealKeys', RUN_SEAL_KEY))?.key;
          if (isRunSealKey(first)) return first;
          await tables.put('sealKeys', { name: RUN_SEAL_KEY, key: made });
          return made;
        });
      }),
  };
}
