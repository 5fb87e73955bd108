import type { ConversationStore } from '../store';
import { conversationRow } from './conversations';
import type { DexieConnection } from './database';
import { memoriesOf } from './memories';
import { newestComplete } from './messages';

/**
 * A run's context reads in one transaction rather than three: each transaction costs the
 * worker a round trip to IndexedDB and its own bookkeeping, on every run.
 */
export function contextTables(connection: DexieConnection): Pick<ConversationStore, 'readContext'> {
  const { db, guard, notify } = connection;
  return {
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
