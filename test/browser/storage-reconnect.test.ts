import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../src/store/dexie-store';
import type { ConversationStore, RunRecord } from '../../src/store/store';
import { runRecord } from '../unit/store/records';

// The store on the engine's own IndexedDB, with faults injected where Dexie meets it
// (`IDBDatabase.prototype.transaction`): Safari's "server lost" `UnknownError`, and
// Chromium's connection closed under the store after storage pressure.

const { transaction } = IDBDatabase.prototype;
afterEach(() => {
  IDBDatabase.prototype.transaction = transaction;
});

/** What `IDBDatabase.transaction` does next: throw `UnknownError`, or close its connection first. */
type Fault = 'unknown-error' | 'close-connection';

/** Installs the fault hook (before the store opens, as Dexie may bind `transaction` then). */
function faultyConnections() {
  const queued: Fault[] = [];
  let always: Fault | undefined;
  IDBDatabase.prototype.transaction = function (
    this: IDBDatabase,
    ...args: Parameters<IDBDatabase['transaction']>
  ) {
    const fault = queued.shift() ?? always;
    if (fault === 'unknown-error')
      throw new DOMException(
        'Connection to Indexed Database server lost. Refresh the page to try again',
        'UnknownError',
      );
    // The browser closed the connection (the page never asked): `transaction` then throws
    // the engine's own InvalidStateError.
    if (fault === 'close-connection') this.close();
    return transaction.apply(this, args);
  } as IDBDatabase['transaction'];
  return {
    next(...faults: Fault[]) {
      queued.push(...faults);
    },
    persist(fault: Fault | undefined) {
      always = fault;
    },
  };
}

function storeFor(database: string): ConversationStore {
  const store = openStore({ name: database });
  onTestFinished(async () => {
    store.close();
    await new Promise((resolve) => {
      const request = indexedDB.deleteDatabase(database);
      request.onsuccess = request.onerror = request.onblocked = resolve;
    });
  });
  return store;
}

/** A run checkpoint with the store tests' plausible defaults. */
const run = (id: string, overrides: Partial<RunRecord> = {}): RunRecord =>
  runRecord({ id, ...overrides });

describe('a store whose IndexedDB connection is lost', () => {
  for (const fault of ['unknown-error', 'close-connection'] as const) {
    it(`reopens the database and retries a write once after ${fault}, losing nothing stored`, async () => {
      const faults = faultyConnections();
      const store = storeFor(`test-${crypto.randomUUID()}`);
      await store.ensureConversation('c');
      await store.commitStep({
        conversationId: 'c',
        runId: 'r0',
        messages: [{ role: 'user', content: 'kept' }],
      });
      await store.putRun(run('before'));
      faults.next(fault);

      await store.putRun(run('after', { partialText: 'written on the reopened connection' }));

      expect(await store.getRun('after')).toMatchObject({
        partialText: 'written on the reopened connection',
      });
      expect(await store.getRun('before')).toMatchObject({ id: 'before' });
      expect((await store.listMessages('c')).map((row) => row.message.content)).toEqual(['kept']);
    });
  }

  it('fails storage-failed, typed, when the connection is lost again on the retry, and keeps every stored row', async () => {
    const faults = faultyConnections();
    const store = storeFor(`test-${crypto.randomUUID()}`);
    await store.ensureConversation('c');
    await store.commitStep({
      conversationId: 'c',
      runId: 'r0',
      messages: [{ role: 'user', content: 'kept' }],
    });
    await store.putRun(run('kept-run'));
    faults.persist('unknown-error');

    await expect(store.putRun(run('kept-run', { status: 'finished' }))).rejects.toMatchObject({
      name: 'AirlockError',
      code: 'storage-failed',
      details: { name: 'UnknownError' },
    });

    faults.persist(undefined);
    expect(await store.getRun('kept-run')).toMatchObject({ status: 'running' });
    expect((await store.listMessages('c')).map((row) => row.message.content)).toEqual(['kept']);
  });

  it('does not retry a step (its messages would be stored twice): it fails typed, stores nothing of it, and the next step is stored', async () => {
    const faults = faultyConnections();
    const store = storeFor(`test-${crypto.randomUUID()}`);
    await store.ensureConversation('c');
    faults.next('close-connection');

    await expect(
      store.commitStep({
        conversationId: 'c',
        runId: 'r',
        messages: [{ role: 'user', content: 'lost' }],
      }),
    ).rejects.toMatchObject({ code: 'storage-failed' });
    await store.commitStep({
      conversationId: 'c',
      runId: 'r',
      messages: [{ role: 'user', content: 'stored once' }],
    });

    expect((await store.listMessages('c')).map((row) => row.message.content)).toEqual([
      'stored once',
    ]);
  });
});
