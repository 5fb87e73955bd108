import { conversationScope } from '../memory-rules';
import type { ConversationStore } from '../store';
import { conversationRow } from './conversations';
import { conversationScopesRange, type DexieConnection } from './database';
import { memoriesOf } from './memories';
import { newestComplete } from './messages';

/**
 * A run's context reads in one transaction rather than three: each transaction costs the
 * worker a round trip to IndexedDB and its own bookkeeping, on every run.
 */
export function contextTables(
  connection: DexieConnection,
): Pick<ConversationStore, 'readContext' | 'conversationIds'> {
  const { db, guard, notify } = connection;
  return {
    conversationIds: () =>
      guard('listing the conversations', () =>
        db.transaction('r', [db.conversations, db.memories], async () => {
          const [stored, scoped] = await Promise.all([
            db.conversations.toCollection().primaryKeys(),
            conversationScopesRange(db).keys(),
          ]);
          const ids = new Set(stored);
          const prefix = conversationScope('');
          for (const [scope] of scoped as unknown as [string, string][])
            ids.add(scope.slice(prefix.length));
          return [...ids];
        }),
      ),
    readContext: ({ conversationId, recent, scopes, create }) =>
      guard("reading a run's context", async () => {
        let created = false;
        const read = await db.transaction(
          create ? 'rw' : 'r',
          [db.messages, db.conversations, db.memories],
          async () => {
            const [rows, conversation, memories] = await Promise.all([
              newestComplete(db, conversationId, recent),
              create
                ? conversationRow(db, conversationId).then((row) => {
                    created = row.created;
                    return row.conversation;
                  })
                : db.conversations.get(conversationId),
              memoriesOf(db, { scopes }),
            ]);
            return { recent: rows, conversation, memories };
          },
        );
        if (created) notify({ table: 'conversations', conversationId });
        return read;
      }),
  };
}
