import { IDBDatabase as FakeDatabase, IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../../src/store/dexie-store';
import type { ConversationStore } from '../../../src/store/store';
import { runRecord, userSays } from './records';

const opened: ConversationStore[] = [];
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
  vi.restoreAllMocks();
});

function storeOn(indexedDB: IDBFactory, openTimeoutMs?: number): ConversationStore {
  const store = openStore({
    name: 'faults',
    indexedDB,
    IDBKeyRange,
    ...(openTimeoutMs === undefined ? {} : { openTimeoutMs }),
  });
  opened.push(store);
  return store;
}

/**
 * Lets a test make the next `count` transactions fail as Safari's lost connection does.
 * Installed before the store opens: Dexie binds `transaction` when it opens.
 */
function lossyConnections() {
  const { transaction } = FakeDatabase.prototype;
  let left = 0;
  vi.spyOn(FakeDatabase.prototype, 'transaction').mockImplementation(function (
    this: IDBDatabase,
    ...args: Parameters<IDBDatabase['transaction']>
  ) {
    if (left > 0) {
      left -= 1;
      throw new DOMException(
        'Connection to Indexed Database server lost. Refresh the page to try again',
        'UnknownError',
      );
    }
    return transaction.apply(this, args);
  });
  return {
    lose(count: number) {
      left = count;
    },
  };
}

/** Opens `faults` at a raw version and never closes when asked, as an old tab might. */
function holdOldVersion(indexedDB: IDBFactory): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open('faults', 1);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

describe('storage faults in the Dexie store', () => {
  it('reopens the database and retries an idempotent write once when the connection is lost', async () => {
    const connections = lossyConnections();
    const store = storeOn(new IDBFactory());
    await store.ensureConversation('c');
    connections.lose(1);

    await store.putRun(runRecord({ id: 'r', status: 'running' }));

    expect(await store.getRun('r')).toMatchObject({ id: 'r', status: 'running' });
  });

  it('does not retry a step, whose repetition would store its messages twice, but works again after', async () => {
    const connections = lossyConnections();
    const store = storeOn(new IDBFactory());
    await store.ensureConversation('c');
    connections.lose(1);

    await expect(
      store.commitStep({ conversationId: 'c', runId: 'r', messages: [userSays('once')] }),
    ).rejects.toMatchObject({ code: 'storage-failed', details: { name: 'UnknownError' } });
    await store.commitStep({ conversationId: 'c', runId: 'r', messages: [userSays('again')] });

    expect((await store.listMessages('c')).map((record) => record.message.content)).toEqual([
      'again',
    ]);
  });

  it('fails with storage-failed when the connection stays lost on the retry', async () => {
    const connections = lossyConnections();
    const store = storeOn(new IDBFactory());
    await store.ensureConversation('c');
    connections.lose(Number.POSITIVE_INFINITY);

    await expect(store.putRun(runRecord({ id: 'r' }))).rejects.toMatchObject({
      code: 'storage-failed',
    });
  });

  it('fails with storage-blocked when an old connection does not close within openTimeoutMs, and opens once it is gone', async () => {
    const indexedDB = new IDBFactory();
    const oldTab = await holdOldVersion(indexedDB);
    const store = storeOn(indexedDB, 50);

    await expect(store.listConversations()).rejects.toMatchObject({
      code: 'storage-blocked',
      details: { database: 'faults', waitedMs: 50 },
    });
    oldTab.close();

    expect(await store.listConversations()).toEqual([]);
  });

  it('fails with storage-blocked when the tables stay held by another connection after opening, and opens once they are free', async () => {
    const indexedDB = new IDBFactory();
    const creating = storeOn(indexedDB);
    await creating.listConversations();
    await creating.close();
    // A connection whose readwrite transaction never ends: what WebKit leaves behind when a
    // worker is terminated while one of its transactions commits.
    const holder = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open('faults');
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    let holding = true;
    const held = holder.transaction('memories', 'readwrite');
    const spin = () => {
      if (holding) held.objectStore('memories').count().onsuccess = spin;
    };
    spin();
    const store = storeOn(indexedDB, 100);

    await expect(store.listConversations()).rejects.toMatchObject({
      code: 'storage-blocked',
      details: { database: 'faults', waitedMs: 100, reason: 'tables-held' },
    });
    holding = false;
    holder.close();

    expect(await store.listConversations()).toEqual([]);
  });

  it('resolves close only once every transaction the store started has ended', async () => {
    const started: IDBTransaction[] = [];
    const ended = new Set<IDBTransaction>();
    const { transaction } = FakeDatabase.prototype;
    vi.spyOn(FakeDatabase.prototype, 'transaction').mockImplementation(function (
      this: IDBDatabase,
      ...args: Parameters<IDBDatabase['transaction']>
    ) {
      const created = transaction.apply(this, args);
      started.push(created);
      created.addEventListener('complete', () => ended.add(created));
      created.addEventListener('abort', () => ended.add(created));
      return created;
    });
    const store = storeOn(new IDBFactory());
    await store.ensureConversation('c');
    const before = started.length;
    const writes = [
      // Asked for together, the two writes go in one transaction.
      store.putRun(runRecord({ id: 'r1' })),
      store.commitStep({ conversationId: 'c', runId: 'r1', messages: [userSays('hi')] }),
      store.listRuns(),
    ];
    // Closed as soon as the two transactions exist, before either can have ended.
    for (let turn = 0; turn < 1_000 && started.length < before + 2; turn++) await Promise.resolve();
    const inFlight = started.slice(before).filter((created) => !ended.has(created));

    await store.close();

    expect(inFlight).toHaveLength(2);
    expect(inFlight.filter((created) => !ended.has(created)).length).toBe(0);
    await Promise.allSettled(writes);
  });

  it('fails with storage-unavailable when IndexedDB refuses to open', async () => {
    const refusing = new IDBFactory();
    vi.spyOn(refusing, 'open').mockImplementation(() => {
      throw new DOMException('The operation is insecure.', 'SecurityError');
    });
    const store = storeOn(refusing);

    await expect(store.listConversations()).rejects.toMatchObject({
      code: 'storage-unavailable',
    });
  });

  it('fails with schema-changed when a newer tab already upgraded the database past this version', async () => {
    const indexedDB = new IDBFactory();
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.open('faults', 1_000);
      request.onsuccess = () => {
        request.result.close();
        resolve();
      };
      request.onerror = () => reject(request.error);
    });
    const store = storeOn(indexedDB);

    await expect(store.listConversations()).rejects.toMatchObject({ code: 'schema-changed' });
    await expect(store.ensureConversation('c')).rejects.toMatchObject({ code: 'schema-changed' });
  });
});
