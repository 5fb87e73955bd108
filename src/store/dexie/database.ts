import Dexie, { type DBCore, type Middleware } from 'dexie';
import { AirlockError, isAirlockError } from '../../errors/airlock-error';
import { DEFAULT_DATABASE } from '../../protocol/memory';
import { every } from '../../timing/later';
import { waitFor } from '../../timing/wait';
import {
  CURRENT_SCHEMA_VERSION,
  SCHEMA_V1,
  SCHEMA_V2,
  SCHEMA_V3,
  SCHEMA_V4,
  SCHEMA_V5,
  SCHEMA_V6,
  SCHEMA_V7,
  SCHEMA_V8,
  SCHEMA_V9,
  SCHEMA_V10,
} from '../schema-versions';
import { isConnectionLost, toStorageError } from '../storage-errors';
import { type ChangeFeed, createChangeFeed, type StoreChange } from '../store-change';
import type { TableName } from '../tables/table-adapter';
import {
  backfillTokenCounts,
  copyVectorCodes,
  indexMessageTerms,
  packChunkVectors,
} from './upgrades';

// The one module that imports Dexie at run time: it opens, upgrades (`upgrades.ts`, which
// imports Dexie's types only) and closes the database; reads and writes go through the
// native transactions it hands to `../tables/indexeddb-tables.ts`.

/** Where the store keeps its data. */
export interface OpenStoreOptions {
  /** The IndexedDB database name, also naming the change channel (`airlock:<name>`). Default `airlock`. */
  readonly name?: string;
  /** The IndexedDB implementation; defaults to the global one (tests pass fake-indexeddb). */
  readonly indexedDB?: IDBFactory;
  /** The `IDBKeyRange` matching `indexedDB`. */
  readonly IDBKeyRange?: typeof IDBKeyRange;
  /**
   * How long opening may stay blocked by another tab's connection at an older version, and
   * how long the first transaction after opening may wait for the database's tables, before
   * calls fail with `storage-blocked` (default 5 000 ms). A slow upgrade that is not blocked
   * is waited for.
   */
  readonly openTimeoutMs?: number;
}

/** Default of `openTimeoutMs`. */
export const DEFAULT_OPEN_TIMEOUT_MS = 5_000;

/** The open database as the IndexedDB adapter (`../tables/indexeddb-tables.ts`) works through it. */
export interface DexieConnection {
  /**
   * Runs one store call, turning every failure into an `AirlockError`. A call marked
   * `retry` (the default: it can be repeated without doing twice what it did once) is tried
   * again, once, on a reopened connection when IndexedDB lost its connection (Safari's
   * "server lost"); one marked `once` is not.
   */
  guard<T>(operation: string, body: () => Promise<T>, retry?: 'retry' | 'once'): Promise<T>;
  /**
   * A native transaction over `tables` on the open connection (call inside `guard`). Waited
   * for by `close` like Dexie's own; a connection gone throws Dexie's `DatabaseClosedError`,
   * so `guard` treats it as it treats Dexie's.
   */
  nativeTransaction(tables: readonly TableName[], mode: 'r' | 'rw'): IDBTransaction;
  /** The `IDBKeyRange` of the connection's IndexedDB, for ranges of native transactions. */
  readonly keyRange: typeof IDBKeyRange;
  /** Posts changes on the `airlock:<name>` channel; call after a write succeeded. */
  notify(...changes: StoreChange[]): void;
  /** The store's `onChange`. */
  listen: ChangeFeed['listen'];
  /**
   * Closes the connection; later calls reject with `storage-failed`. Resolves once none of
   * its transactions is in flight (an open under way finishes first), so that the worker can
   * then be ended safely (see `trackTransactions`).
   */
  close(): Promise<void>;
}

/**
 * A Dexie middleware that keeps the native transactions in flight in `inFlight` until they
 * complete or abort. WebKit (2.50) can leave a database unusable for every later connection
 * when a worker is terminated while one of its transactions is committing: later opens
 * succeed, but every transaction on the tables it held waits (apparently WebKit bug 324094,
 * still open). So a store is closed, and its transactions waited for, before its worker ends.
 */
function trackTransactions(inFlight: Set<Promise<void>>): Middleware<DBCore> {
  return {
    stack: 'dbcore',
    name: 'airlock-in-flight',
    create: (down) => ({
      ...down,
      transaction(stores, mode, options) {
        const transaction = down.transaction(stores, mode, options);
        // The IndexedDB core hands out the native transaction (an EventTarget).
        const native = transaction as Partial<EventTarget>;
        if (typeof native.addEventListener === 'function') track(inFlight, native as EventTarget);
        return transaction;
      },
    }),
  };
}

/** Keeps `transaction` in `inFlight` until it completes or aborts. */
function track(inFlight: Set<Promise<void>>, transaction: EventTarget): void {
  const ended = new Promise<void>((resolve) => {
    transaction.addEventListener('complete', () => resolve());
    transaction.addEventListener('abort', () => resolve());
  });
  inFlight.add(ended);
  void ended.then(() => inFlight.delete(ended));
}

/**
 * Waits for one readwrite transaction over every table: it can only run once no other
 * connection holds any of them. A connection a terminated worker left behind mid-commit (see
 * `trackTransactions`) holds them forever, with no `blocked` event, so the wait is bounded.
 */
function probeTables(db: Dexie, timeoutMs: number): Promise<boolean> {
  const idb = db.backendDB();
  const names = Array.from(idb.objectStoreNames);
  if (names.length === 0) return Promise.resolve(true);
  const transaction = idb.transaction(names, 'readwrite');
  transaction.objectStore(names[0] as string).count();
  const done = new Promise<boolean>((resolve, reject) => {
    transaction.oncomplete = () => resolve(true);
    transaction.onabort = () => reject(transaction.error);
  });
  return waitFor(done, { timeoutMs }).then((waited) => waited.outcome === 'settled');
}

function defineDatabase(name: string, options: OpenStoreOptions): Dexie {
  const db = new Dexie(name, {
    ...(options.indexedDB === undefined ? {} : { indexedDB: options.indexedDB }),
    ...(options.IDBKeyRange === undefined ? {} : { IDBKeyRange: options.IDBKeyRange }),
  });
  // Shipped versions are never edited: append a version (with an upgrade) to change the schema.
  db.version(1).stores(SCHEMA_V1);
  db.version(2).stores(SCHEMA_V2).upgrade(backfillTokenCounts);
  db.version(3).stores(SCHEMA_V3);
  db.version(4).stores(SCHEMA_V4);
  db.version(5).stores(SCHEMA_V5).upgrade(packChunkVectors);
  db.version(6).stores(SCHEMA_V6).upgrade(indexMessageTerms);
  db.version(7).stores(SCHEMA_V7).upgrade(copyVectorCodes);
  db.version(8).stores(SCHEMA_V8);
  db.version(9).stores(SCHEMA_V9);
  db.version(10).stores(SCHEMA_V10);
  return db;
}

function isNamed(error: unknown, name: string): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    ((error as { name?: unknown }).name === name ||
      isNamed((error as { inner?: unknown }).inner, name))
  );
}

function describeError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { name, message } = error as { name?: unknown; message?: unknown };
  return `${String(name)}: ${String(message)}`;
}

const closedReasons = {
  'newer-version': 'the database was upgraded by a newer tab; reload this page',
  deleted: 'the database was deleted by another tab',
  caller: 'the store is closed',
} as const;

/**
 * The connection to the store's database. Nothing touches IndexedDB until the first call,
 * which opens it: an open blocked by another tab for `openTimeoutMs` is given up
 * (`storage-blocked`); one that cannot start at all (no IndexedDB, private mode) is
 * `storage-unavailable`; a database already at a newer version is `schema-changed`. When
 * another tab opens a newer version, this connection closes, so that tab is not blocked,
 * and later calls reject with `schema-changed` (`storage-failed` when it was deleted).
 */
export function openConnection(options: OpenStoreOptions = {}): DexieConnection {
  // Dexie turns its debug mode on for pages served from localhost: it then tags each table
  // operation and promise callback as a DevTools async task (`console.createTask`), to help
  // an app debug its own queries. Airlock's queries are not the app's to debug, and this is
  // the agent worker's own copy of Dexie, so it costs only Airlock.
  Dexie.debug = false;
  const name = options.name ?? DEFAULT_DATABASE;
  const openTimeoutMs = options.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
  const db = defineDatabase(name, options);
  const feed = createChangeFeed(name);
  let closedBy: keyof typeof closedReasons | undefined;
  let opening: Promise<void> | undefined;
  /** Once opened, a failed reopen (after a lost connection) is a storage failure, not a missing IndexedDB. */
  let everOpened = false;
  let blockedSince: number | undefined;
  /** Ends with each native transaction in flight. */
  const inFlight = new Set<Promise<void>>();
  db.use(trackTransactions(inFlight));
  // Dexie's `liveQuery` machinery works out what each write changed and posts it on a
  // BroadcastChannel of its own, and caches reads for live queries. Airlock uses neither
  // (its change feed is `store-change.ts`); in a profile of 20 runs at once, the worker's
  // time in Dexie went from 289 to 216 ms without them.
  db.unuse({ stack: 'dbcore', name: 'Observability' });
  db.unuse({ stack: 'dbcore', name: 'Cache' });

  db.on('versionchange', (event) => {
    closedBy = event.newVersion ? 'newer-version' : 'deleted';
    db.close();
    feed.close();
    // Prevents Dexie's default handler, which closes but reopens on the next call.
    return false;
  });
  // Fired when this open waits for another connection (an old tab) to close.
  db.on('blocked', () => {
    blockedSince ??= Date.now();
  });

  function closedError(operation: string): AirlockError {
    const reason = closedBy ?? 'caller';
    return new AirlockError(
      reason === 'newer-version' ? 'schema-changed' : 'storage-failed',
      `Storage failed while ${operation}: ${closedReasons[reason]}.`,
      { details: { operation, reason } },
    );
  }

  /** Opens the database once (again after a lost connection); concurrent calls share it. */
  function ensureOpen(operation: string): Promise<void> {
    if (db.isOpen()) return Promise.resolve();
    opening ??= openOnce(operation).finally(() => {
      opening = undefined;
    });
    return opening;
  }

  async function openOnce(operation: string): Promise<void> {
    blockedSince = undefined;
    let gaveUp = false;
    // Timed from the `blocked` event, not from the start: a long upgrade nobody blocks is fine.
    const stopWatch = every(Math.max(10, Math.min(250, openTimeoutMs / 4)), () => {
      if (blockedSince !== undefined && Date.now() - blockedSince >= openTimeoutMs) {
        gaveUp = true;
        db.close();
      }
    });
    try {
      await db.open();
      // Opened: nothing blocks it any more, and the wait below has its own bound.
      stopWatch();
      // Dexie opens a database a newer tab already upgraded at that newer version (native
      // versions are Dexie's times ten); this code must not write rows it does not know.
      if (db.backendDB().version > CURRENT_SCHEMA_VERSION * 10) {
        closedBy = 'newer-version';
        db.close();
        feed.close();
        throw closedError(operation);
      }
      if (!(await probeTables(db, openTimeoutMs))) {
        db.close();
        throw new AirlockError(
          'storage-blocked',
          `The database "${name}" opened, but its tables stayed held by another connection for ${openTimeoutMs} ms (while ${operation}): one that ended in the middle of a transaction (in WebKit, a worker terminated while writing) can keep holding them. Restarting the browser may be needed.`,
          { details: { database: name, waitedMs: openTimeoutMs, reason: 'tables-held' } },
        );
      }
      everOpened = true;
    } catch (error) {
      if (gaveUp) {
        throw new AirlockError(
          'storage-blocked',
          `The database "${name}" is held open by another tab at an older version, which did not close within ${openTimeoutMs} ms (while ${operation}). Close or reload the other tabs of this app.`,
          { details: { database: name, waitedMs: openTimeoutMs }, cause: error },
        );
      }
      if (isNamed(error, 'VersionError')) {
        closedBy = 'newer-version';
        throw closedError(operation);
      }
      if (isAirlockError(error) || closedBy !== undefined) throw error;
      if (everOpened) throw toStorageError(error, `reopening the database while ${operation}`);
      throw new AirlockError(
        'storage-unavailable',
        `IndexedDB cannot be opened here (private mode or disabled storage?) while ${operation}: ${describeError(error)}`,
        { details: { database: name, operation }, cause: error },
      );
    } finally {
      stopWatch();
    }
  }

  function failure(error: unknown, operation: string): AirlockError {
    // A connection closed under the operation fails with a Dexie error; say why it closed.
    if (closedBy !== undefined && !isAirlockError(error)) return closedError(operation);
    return toStorageError(error, operation);
  }

  return {
    async guard(operation, body, retry = 'retry') {
      if (closedBy !== undefined) throw closedError(operation);
      try {
        await ensureOpen(operation);
        return await body();
      } catch (error) {
        if (closedBy === undefined && !isAirlockError(error) && isConnectionLost(error)) {
          db.close();
          if (retry === 'retry') {
            try {
              await ensureOpen(operation);
              return await body();
            } catch (again) {
              throw failure(again, operation);
            }
          }
        }
        throw failure(error, operation);
      }
    },
    nativeTransaction(tables, mode) {
      const idb = db.isOpen() ? db.backendDB() : null;
      if (!idb) throw new Dexie.DatabaseClosedError('The database connection is closed.');
      let transaction: IDBTransaction;
      try {
        transaction = idb.transaction(tables, mode === 'rw' ? 'readwrite' : 'readonly');
      } catch (error) {
        // A connection the browser closed under Dexie, before Dexie heard of it.
        if (isNamed(error, 'InvalidStateError'))
          throw new Dexie.DatabaseClosedError('The database connection is closed.', error as Error);
        throw error;
      }
      track(inFlight, transaction);
      return transaction;
    },
    keyRange: options.IDBKeyRange ?? IDBKeyRange,
    notify(...changes) {
      feed.post(changes);
    },
    listen: (listener) => feed.listen(listener),
    async close() {
      closedBy ??= 'caller';
      // Closing mid-open would leave the native open (and its upgrade) running unwatched.
      await opening?.catch(() => undefined);
      db.close();
      feed.close();
      // No transaction can start on a closed connection: these are the last ones.
      await Promise.all(inFlight);
    },
  };
}
