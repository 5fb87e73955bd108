import type { DexieConnection } from '../dexie/database';
import type { Key, KeyRange, Query, TableAdapter, TableName, Tables } from './table-adapter';

// The tables in IndexedDB. Dexie opens and upgrades the database (`../dexie/database.ts`);
// the store's reads and writes go to native transactions: Dexie's promise zones and
// middleware cost the agent worker about as much CPU per run as the model's stream.

/** The result of a native request, once it succeeds; its error if it fails. */
export function requested<T>(request: IDBRequest): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result as T);
    request.onerror = () => reject(request.error);
  });
}

/** `requested`, for a write the caller need not await: its failure fails the transaction. */
function written(request: IDBRequest): Promise<Key> {
  const result = requested<Key>(request);
  result.catch(() => undefined);
  return result;
}

/**
 * Resolves once a native transaction commits; rejects when it aborts, with the error that
 * aborted it (a failed request's), or an `AbortError` when it was aborted on purpose.
 */
function committed(transaction: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    transaction.addEventListener('complete', () => resolve());
    transaction.addEventListener('abort', () =>
      reject(transaction.error ?? new DOMException('The transaction was aborted.', 'AbortError')),
    );
  });
}

/** Aborts `transaction`, unless it has ended already (then there is nothing to undo). */
function abortUnlessEnded(transaction: IDBTransaction): void {
  try {
    transaction.abort();
  } catch (error) {
    if (!(error instanceof DOMException && error.name === 'InvalidStateError')) throw error;
  }
}

/**
 * Walks a cursor request, handing each cursor to `step` until it returns false or the
 * cursor ends.
 */
function walk<C extends IDBCursor>(
  request: IDBRequest<C | null>,
  step: (cursor: C) => boolean,
): Promise<void> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => {
      const cursor = request.result;
      if (cursor && step(cursor)) cursor.continue();
      else resolve();
    };
    request.onerror = () => reject(request.error);
  });
}

function tablesOf(transaction: IDBTransaction, keyRange: typeof IDBKeyRange): Tables {
  const source = (table: TableName, index: string | undefined) => {
    const store = transaction.objectStore(table);
    return index === undefined ? store : store.index(index);
  };
  /** The native range; null for one that holds no key (lower above upper). */
  const nativeRange = (range: KeyRange | undefined): IDBKeyRange | undefined | null => {
    if (range === undefined) return undefined;
    const { lower, upper, lowerOpen = false, upperOpen = false } = range;
    try {
      if (lower !== undefined && upper !== undefined)
        return keyRange.bound(lower, upper, lowerOpen, upperOpen);
      if (lower !== undefined) return keyRange.lowerBound(lower, lowerOpen);
      if (upper !== undefined) return keyRange.upperBound(upper, upperOpen);
      return undefined;
    } catch (error) {
      if (error instanceof DOMException && error.name === 'DataError') return null;
      throw error;
    }
  };

  /** Rows (or keys) along a cursor: for a reverse or filtered read, which `getAll` cannot do. */
  async function collect<V>(
    table: TableName,
    query: Query<unknown>,
    value: (cursor: IDBCursorWithValue) => V,
  ): Promise<V[]> {
    const range = nativeRange(query.range);
    const limit = query.limit ?? Number.POSITIVE_INFINITY;
    if (range === null || limit <= 0) return [];
    const found: V[] = [];
    const direction = query.reverse ? 'prev' : 'next';
    await walk(source(table, query.index).openCursor(range, direction), (cursor) => {
      if (!query.filter || query.filter(cursor.value)) found.push(value(cursor));
      return found.length < limit;
    });
    return found;
  }

  return {
    get: (table, key) => requested(transaction.objectStore(table).get(key)),

    getAll(table, query = {}) {
      if (query.reverse || query.filter)
        return collect(table, query as Query<unknown>, (cursor) => cursor.value);
      const range = nativeRange(query.range);
      if (range === null || (query.limit ?? 1) <= 0) return Promise.resolve([]);
      return requested(source(table, query.index).getAll(range, query.limit));
    },

    primaryKeys(table, query = {}) {
      const range = nativeRange(query.range);
      if (range === null) return Promise.resolve([]);
      return requested(source(table, query.index).getAllKeys(range, query.limit));
    },

    async indexKeys(table, query) {
      const range = nativeRange(query.range);
      if (range === null) return [];
      const keys: Key[] = [];
      await walk(source(table, query.index).openKeyCursor(range), (cursor) => {
        keys.push(cursor.key);
        return true;
      });
      return keys;
    },

    count(table, query = {}) {
      const range = nativeRange(query.range);
      if (range === null) return Promise.resolve(0);
      return requested(source(table, query.index).count(range));
    },

    put: (table, row) => written(transaction.objectStore(table).put(row)),
    add: (table, row) => written(transaction.objectStore(table).add(row)),
    delete: (table, key) => {
      const done = written(transaction.objectStore(table).delete(key)).then(() => {});
      // Need not be awaited either (see `Tables`): its failure is the transaction's.
      done.catch(() => undefined);
      return done;
    },

    async deleteAll(table, query) {
      const range = nativeRange(query.range);
      if (range === null) return 0;
      const store = transaction.objectStore(table);
      if (query.index === undefined) {
        const count = await requested<number>(store.count(range));
        if (count > 0) void written(range === undefined ? store.clear() : store.delete(range));
        return count;
      }
      const keys = await requested<Key[]>(store.index(query.index).getAllKeys(range));
      // An entry per index key: a multi-entry index may name a row more than once.
      const unique = new Set(keys.map((key) => JSON.stringify(key)));
      for (const key of keys) void written(store.delete(key));
      return unique.size;
    },
  };
}

/** The `TableAdapter` over an IndexedDB connection. */
export function indexedDbTables(connection: DexieConnection): TableAdapter {
  return {
    guard: connection.guard,
    async transaction(mode, tables, body) {
      const transaction = connection.nativeTransaction(tables, mode);
      const ended = committed(transaction);
      const result = body(tablesOf(transaction, connection.keyRange)).catch((error: unknown) => {
        abortUnlessEnded(transaction);
        throw error;
      });
      const [value, commit] = await Promise.allSettled([result, ended]);
      // A failed request aborts the transaction, and the requests still waiting fail with an
      // AbortError: the transaction's own error says why. One aborted here has none.
      if (commit.status === 'rejected')
        throw transaction.error ?? (value.status === 'rejected' ? value.reason : commit.reason);
      if (value.status === 'rejected') throw value.reason;
      return value.value;
    },
    notify: connection.notify,
    listen: connection.listen,
    close: connection.close,
  };
}
