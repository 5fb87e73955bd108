import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach } from 'vitest';
import { openStore } from '../../../src/store/dexie-store';
import type { ConversationStore } from '../../../src/store/store';

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

/**
 * A `setUp` for a test file: each call opens a store with `fresh`, and every store opened is
 * closed after each test. `fresh` is the caller's import of `freshStore`, not this module's,
 * so the suites that `memory-store.test.ts` runs again get the in-memory stores it mocks in.
 */
export function storesClosedAfterEach(fresh: () => StoreFixture): () => ConversationStore {
  const opened: ConversationStore[] = [];
  afterEach(() => {
    for (const store of opened.splice(0)) store.close();
  });
  return () => {
    const { store } = fresh();
    opened.push(store);
    return store;
  };
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
    proposals: await store.listProposals(),
  };
}
