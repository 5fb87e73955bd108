import { AirlockError } from '../../errors/airlock-error';
import { SCHEMA_VERSIONS } from '../schema-versions';
import { toStorageError } from '../storage-errors';
import { createChangeFeed } from '../store-change';
import type { Key, KeyQuery, KeyRange, TableAdapter, TableName, Tables } from './table-adapter';

// The tables in memory, for browsers where IndexedDB cannot be opened (private modes,
// disabled storage): the same schema (read from `schema-versions.ts`), the same key order,
// and the same transactions as IndexedDB gives, so the store's rules behave alike over both
// (the store's unit suites run against both). Nothing is kept once the agent is gone.

/** A key path: one property, or several for a compound key (`[a+b]`). */
type KeyPath = string | readonly string[];

interface IndexSpec {
  readonly path: KeyPath;
  readonly multiEntry: boolean;
  readonly unique: boolean;
}

interface TableSpec {
  /** Undefined for outbound keys (`++`). */
  readonly path: KeyPath | undefined;
  readonly autoIncrement: boolean;
  readonly indexes: ReadonlyMap<string, IndexSpec>;
}

/** A key path as Dexie writes it: `id`, `[a+b]`. */
function keyPathOf(text: string): KeyPath {
  return text.startsWith('[') ? text.slice(1, -1).split('+') : text;
}

/** The tables of the newest schema version, from Dexie's stores strings. */
function currentSchema(): Map<string, TableSpec> {
  const merged: Record<string, string | null> = {};
  for (const version of SCHEMA_VERSIONS) Object.assign(merged, version);
  const tables = new Map<string, TableSpec>();
  for (const [name, spec] of Object.entries(merged)) {
    if (spec === null) continue;
    const [primary = '', ...rest] = spec.split(',').map((part) => part.trim());
    const autoIncrement = primary.startsWith('++');
    const primaryPath = primary.replace(/^\+\+/, '');
    const indexes = new Map<string, IndexSpec>();
    for (const part of rest) {
      const name = part.replace(/^[&*]+/, '');
      indexes.set(name, {
        path: keyPathOf(name),
        multiEntry: part.includes('*'),
        unique: part.includes('&'),
      });
    }
    tables.set(name, {
      path: primaryPath === '' ? undefined : keyPathOf(primaryPath),
      autoIncrement,
      indexes,
    });
  }
  return tables;
}

/** IndexedDB's order of key types: numbers, dates, strings, binary, arrays. */
function keyRank(key: unknown): number {
  if (typeof key === 'number') return 1;
  if (key instanceof Date) return 2;
  if (typeof key === 'string') return 3;
  if (key instanceof ArrayBuffer || ArrayBuffer.isView(key)) return 4;
  return 5;
}

/** Compares two valid keys as IndexedDB does (`indexedDB.cmp`). */
export function compareKeys(a: Key, b: Key): number {
  const rank = keyRank(a) - keyRank(b);
  if (rank !== 0) return rank;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let index = 0; index < Math.min(a.length, b.length); index += 1) {
      const order = compareKeys(a[index] as Key, b[index] as Key);
      if (order !== 0) return order;
    }
    return a.length - b.length;
  }
  const left = a instanceof Date ? a.getTime() : a;
  const right = b instanceof Date ? b.getTime() : b;
  if (typeof left === 'number' || typeof left === 'string')
    return left < right ? -1 : left > right ? 1 : 0;
  const x = new Uint8Array(ArrayBuffer.isView(a) ? a.buffer : (a as ArrayBuffer));
  const y = new Uint8Array(ArrayBuffer.isView(b) ? b.buffer : (b as ArrayBuffer));
  return compareKeys([...x], [...y]);
}

function isKey(value: unknown): value is Key {
  if (typeof value === 'number') return !Number.isNaN(value);
  if (typeof value === 'string') return true;
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return true;
  return Array.isArray(value) && value.every(isKey);
}

/** The key of `row` at `path`; undefined when it holds no valid key (then it is not indexed). */
function keyAt(row: unknown, path: KeyPath): Key | undefined {
  const record = row as Record<string, unknown>;
  const key = typeof path === 'string' ? record[path] : path.map((name) => record[name]);
  return isKey(key) ? key : undefined;
}

/** The keys an index holds for `row`: one, none, or for a multi-entry index one per element. */
function indexKeysOf(row: unknown, index: IndexSpec): Key[] {
  if (!index.multiEntry || typeof index.path !== 'string') {
    const key = keyAt(row, index.path);
    return key === undefined ? [] : [key];
  }
  const value = (row as Record<string, unknown>)[index.path];
  if (!Array.isArray(value)) return isKey(value) ? [value] : [];
  const keys = value.filter(isKey);
  return keys.filter(
    (key, position) => keys.findIndex((other) => compareKeys(key, other) === 0) === position,
  );
}

function inRange(key: Key, range: KeyRange | undefined): boolean {
  if (range === undefined) return true;
  if (range.lower !== undefined) {
    const order = compareKeys(key, range.lower);
    if (order < 0 || (order === 0 && range.lowerOpen)) return false;
  }
  if (range.upper !== undefined) {
    const order = compareKeys(key, range.upper);
    if (order > 0 || (order === 0 && range.upperOpen)) return false;
  }
  return true;
}

/** A stored row under its primary key. */
interface Entry {
  readonly key: Key;
  readonly value: unknown;
}

/** One table's rows, by their primary key written out. */
interface TableData {
  readonly spec: TableSpec;
  readonly rows: Map<string, Entry>;
  lastKey: number;
}

const keyText = (key: Key) => JSON.stringify(key);

const constraintError = (message: string) => new DOMException(message, 'ConstraintError');

/** Options of `memoryTables`. */
export interface MemoryTablesOptions {
  /** Names the change channel (`airlock:<name>`), as the database it stands in for would. */
  readonly name: string;
}

/**
 * Tables in memory. Transactions run one at a time, each all or nothing: a failure undoes
 * what it wrote. Rows are copied in and out (`structuredClone`), as IndexedDB does, so a
 * caller can never edit what is stored by holding on to a row.
 */
export function memoryTables({ name }: MemoryTablesOptions): TableAdapter {
  const feed = createChangeFeed(name);
  const data = new Map<string, TableData>(
    [...currentSchema()].map(([table, spec]) => [table, { spec, rows: new Map(), lastKey: 0 }]),
  );
  let closed = false;
  /** Settles once the transaction asked for last has ended. */
  let last: Promise<unknown> = Promise.resolve();

  const tableOf = (table: TableName) => data.get(table) as TableData;

  /** Index (or primary) entries `query` finds, in its order. */
  function select(table: TableName, query: KeyQuery & { filter?: (row: never) => boolean }) {
    const { spec, rows } = tableOf(table);
    const index = query.index === undefined ? undefined : spec.indexes.get(query.index);
    if (query.index !== undefined && index === undefined)
      throw new DOMException(`No index "${query.index}" on "${table}".`, 'NotFoundError');
    const found: { indexKey: Key; entry: Entry }[] = [];
    for (const entry of rows.values())
      for (const indexKey of index ? indexKeysOf(entry.value, index) : [entry.key])
        if (inRange(indexKey, query.range)) found.push({ indexKey, entry });
    found.sort(
      (a, b) => compareKeys(a.indexKey, b.indexKey) || compareKeys(a.entry.key, b.entry.key),
    );
    if (query.reverse) found.reverse();
    const kept = query.filter
      ? found.filter(({ entry }) => (query.filter as (row: unknown) => boolean)(entry.value))
      : found;
    return kept.slice(0, query.limit);
  }

  /** The tables as one transaction sees them; `undo` gathers how to take back each write. */
  function view(undo: (() => void)[], isActive: () => boolean): Tables {
    const active = () => {
      if (!isActive())
        throw new DOMException('The transaction has finished.', 'TransactionInactiveError');
    };
    /** Sets (or, without `entry`, deletes) a row, keeping how to restore it. */
    function write(table: TableData, text: string, entry: Entry | undefined) {
      const before = table.rows.get(text);
      undo.push(() => {
        if (before) table.rows.set(text, before);
        else table.rows.delete(text);
      });
      if (entry) table.rows.set(text, entry);
      else table.rows.delete(text);
    }
    function store(tableName: TableName, row: unknown, replace: boolean): Key {
      active();
      const table = tableOf(tableName);
      const { spec } = table;
      const value = structuredClone(row) as Record<string, unknown>;
      let key = spec.path === undefined ? undefined : keyAt(value, spec.path);
      if (key === undefined) {
        if (!spec.autoIncrement) throw new DOMException('The row has no valid key.', 'DataError');
        key = table.lastKey + 1;
        if (typeof spec.path === 'string') value[spec.path] = key;
      }
      if (typeof key === 'number' && spec.autoIncrement)
        table.lastKey = Math.max(table.lastKey, Math.floor(key));
      const text = keyText(key);
      if (!replace && table.rows.has(text)) throw constraintError(`Key ${text} is stored.`);
      for (const index of spec.indexes.values()) {
        if (!index.unique) continue;
        for (const indexKey of indexKeysOf(value, index))
          for (const [other, entry] of table.rows)
            if (
              other !== text &&
              indexKeysOf(entry.value, index).some((k) => !compareKeys(k, indexKey))
            )
              throw constraintError(`A unique index of "${tableName}" holds that key.`);
      }
      write(table, text, { key, value });
      return key;
    }
    return {
      async get(table, key) {
        active();
        const entry = tableOf(table).rows.get(keyText(key));
        return entry && structuredClone(entry.value as never);
      },
      async getAll(table, query = {}) {
        active();
        return select(table, query as never).map(({ entry }) =>
          structuredClone(entry.value as never),
        );
      },
      async primaryKeys(table, query = {}) {
        active();
        return select(table, query).map(({ entry }) => entry.key);
      },
      async indexKeys(table, query) {
        active();
        return select(table, query).map(({ indexKey }) => indexKey);
      },
      async count(table, query = {}) {
        active();
        return select(table, query).length;
      },
      put: (table, row) => Promise.resolve(store(table, row, true)),
      add: (table, row) => Promise.resolve(store(table, row, false)),
      delete(table, key) {
        active();
        write(tableOf(table), keyText(key), undefined);
        return Promise.resolve();
      },
      async deleteAll(table, query) {
        active();
        const texts = new Set(select(table, query).map(({ entry }) => keyText(entry.key)));
        for (const text of texts) write(tableOf(table), text, undefined);
        return texts.size;
      },
    };
  }

  return {
    async guard(operation, body) {
      if (closed)
        throw new AirlockError(
          'storage-failed',
          `Storage failed while ${operation}: the store is closed.`,
          { details: { operation, reason: 'caller' } },
        );
      try {
        return await body();
      } catch (error) {
        // e.g. a DataCloneError for a value IndexedDB could not store either.
        throw toStorageError(error, operation);
      }
    },
    transaction(_mode, _tables, body) {
      const run = last.then(async () => {
        const undo: (() => void)[] = [];
        let active = true;
        try {
          return await body(view(undo, () => active));
        } catch (error) {
          active = false;
          for (const step of undo.reverse()) step();
          throw error;
        } finally {
          active = false;
        }
      });
      last = run.catch(() => undefined);
      return run;
    },
    notify: (...changes) => feed.post(changes),
    listen: (listener) => feed.listen(listener),
    async close() {
      closed = true;
      feed.close();
      await last;
    },
  };
}
