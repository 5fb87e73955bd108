import type { ConversationStore } from '../store';
import type { DexieConnection } from './database';
import { applicable, scopedMemories } from './memories';
import { newestMessages } from './messages';

/** The one read a run makes before its first model request. */
export function runContextTables(
  connection: DexieConnection,
): Pick<ConversationStore, 'readRunContext'> {
  const { db, guard } = connection;
  return {
    // One transaction, its reads asked at once: a run starts after one wait, not three.
    readRunContext: (conversationId, { recent, scopes }) =>
      guard("reading a run's context", async () => {
        const now = Date.now();
        const tables = [db.messages, db.conversations, db.memories];
        const [messages, conversation, memories] = await db.transaction('r', tables, () =>
          Promise.all([
            newestMessages(db, conversationId, recent),
            db.conversations.get(conversationId),
            scopedMemories(db, scopes),
          ]),
        );
        return { recent: messages, conversation, memories: applicable(memories, now) };
      }),
  };
}
