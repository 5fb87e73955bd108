import { conversationScope } from '../memory-rules';
import type { ConversationStore } from '../store';
import type { TableAdapter } from '../tables/table-adapter';
import { conversationRow } from './conversations';
import { memoriesOf } from './memories';
import { newestComplete } from './messages';
import { conversationScopes } from './ranges';

/**
 * A run's context reads in one transaction rather than three: each transaction costs the
 * worker a round trip to IndexedDB and its own bookkeeping, on every run.
 */
export function contextRules(
  adapter: TableAdapter,
): Pick<ConversationStore, 'readContext' | 'conversationIds'> {
  const { guard, transaction, notify } = adapter;
  return {
    conversationIds: () =>
      guard('listing the conversations', () =>
        transaction('r', ['conversations', 'memories'], async (tables) => {
          const [stored, scoped] = await Promise.all([
            tables.primaryKeys('conversations'),
            tables.indexKeys('memories', conversationScopes()),
          ]);
          const ids = new Set(stored as string[]);
          const prefix = conversationScope('');
          for (const [scope] of scoped as [string, string][]) ids.add(scope.slice(prefix.length));
          return [...ids];
        }),
      ),
    readContext: ({ conversationId, recent, scopes, create }) =>
      guard("reading a run's context", async () => {
        let created = false;
        const read = await transaction(
          create ? 'rw' : 'r',
          ['messages', 'conversations', 'memories'],
          async (tables) => {
            const [rows, conversation, memories] = await Promise.all([
              newestComplete(tables, conversationId, recent),
              create
                ? conversationRow(tables, conversationId).then((row) => {
                    created = row.created;
                    return row.conversation;
                  })
                : tables.get('conversations', conversationId),
              memoriesOf(tables, { scopes }),
            ]);
            return { recent: rows, conversation, memories };
          },
        );
        if (created) notify({ table: 'conversations', conversationId });
        return read;
      }),
  };
}
