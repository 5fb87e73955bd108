import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { openStore } from '../../../src/memory/dexie-store';
import type { ConversationStore } from '../../../src/memory/store';

/** A store on its own in-memory IndexedDB, with what a test needs to reach it again. */
export interface StoreFixture {
  readonly store: ConversationStore;
  readonly name: string;
  /** Absent for the in-memory store, which the same suites also run against. */
  readonly indexedDB: IDBFactory | undefined;
  /** Opens another store on the same database, as a second tab would. */
  reopen(): ConversationStore;
}

let counter = 0;

/** A fresh store: a new fake IndexedDB and a database name no other test uses. */
export function freshStore(): StoreFixture {
  counter += 1;
  const name = `airlock-test-${counter}`;
  const indexedDB = new IDBFactory();
  const reopen = () => openStore({ name, indexedDB, IDBKeyRange });
  return { store: reopen(), name, indexedDB, reopen };
}

/** Everything the store holds, read through its own API, to compare before and after. */
export async function dump(store: ConversationStore) {
  const conversations = await store.listConversations();
  const messages = await Promise.all(
    conversations.map((conversation) => store.listMessages(conversation.id)),
  );
  return {
    conversations,
    messages,
    memories: await store.listMemories({ includeExpired: true }),
    runs: await store.listRuns(),
    audit: await store.listAudit(),
  };
}
