import type { KnowledgeChunkText, KnowledgeDocumentRecord } from '../../protocol/knowledge';
import type {
  AttachmentRecord,
  AuditRecord,
  MemoryProposal,
  MemoryRecord,
  MessageRecord,
  RunRecord,
} from '../../protocol/memory';
import type { StoredConversation } from '../conversation-revision';
import type { ChangeFeed, StoreChange } from '../store-change';
import type { VectorBlockRecord, VectorCodesRecord } from '../vector-blocks';

// What the store's rules (`../rules/`) need of the place rows are kept, and no more: keyed
// rows in named tables, read by key or by a key range of an index, written in transactions
// that are all or nothing. Two adapters: IndexedDB (`indexeddb-tables.ts`) and maps in memory
// (`memory-tables.ts`), for browsers where IndexedDB cannot be opened.

/** The words one message is found by (a message without any has no row). */
export interface MessageTermsRecord {
  readonly conversationId: string;
  readonly seq: number;
  readonly terms: readonly string[];
}

/** A key of the store's own (`sealKeys`), by name; read back, it may hold anything. */
export interface SealKeyRecord {
  readonly name: string;
  readonly key: unknown;
}

/** The rows of each table, as the rules write them (rows read back are data to check). */
export interface TableRows {
  conversations: StoredConversation;
  messages: MessageRecord;
  memories: MemoryRecord;
  runs: RunRecord;
  /** Outbound auto-increment keys: the records stay exactly `AuditRecord`s. */
  audit: AuditRecord;
  documents: KnowledgeDocumentRecord;
  /** Text only since version 5 (their vectors are in `vectorBlocks`). */
  chunks: KnowledgeChunkText;
  /** Inbound auto-increment `id`. */
  vectorBlocks: VectorBlockRecord;
  /** Since version 7: the int8 copy of each block, under the block's id. */
  vectorCodes: VectorCodesRecord;
  attachments: AttachmentRecord;
  /** Since version 6: the words of each user and assistant message, for the conversation search. */
  messageTerms: MessageTermsRecord;
  /** Since version 8: what `memory.learn` holds for the app in confirm mode. */
  proposals: MemoryProposal;
  /** Since version 9: the key run rows are sealed with. */
  sealKeys: SealKeyRecord;
}

/** The name of one of the store's tables. */
export type TableName = keyof TableRows;

/** A primary or index key, ordered as IndexedDB orders keys (numbers, then strings, then arrays). */
export type Key = IDBValidKey;

/** The keys from `lower` to `upper` (either side open-ended when absent, excluded when `…Open`). */
export interface KeyRange {
  readonly lower?: Key;
  readonly upper?: Key;
  readonly lowerOpen?: boolean;
  readonly upperOpen?: boolean;
}

/** Which entries of a table or index, in which order. */
export interface KeyQuery {
  /** An index as the schema names it (`[conversationId+seq]`, `terms`); the primary key when absent. */
  readonly index?: string;
  /** The keys of the index (or primary keys) to read; every row when absent. */
  readonly range?: KeyRange;
  /** Highest key first. Rows of equal index keys come by primary key (reversed too). */
  readonly reverse?: boolean;
  readonly limit?: number;
}

/** Which rows of a table, in which order. */
export interface Query<Row> extends KeyQuery {
  /** Keeps the rows it holds for; applied before `limit`. */
  readonly filter?: (row: Row) => boolean;
}

/** Exactly `key`. */
export const only = (key: Key): KeyRange => ({ lower: key, upper: key });

/** Compound keys that start with `prefix` (`[prefix…, anything]`): arrays sort after every other key. */
export const startingWith = (...prefix: Key[]): KeyRange => ({
  lower: prefix,
  upper: [...prefix, []],
});

/**
 * One transaction's view of the tables. Reads resolve with copies of the rows. Writes are
 * asked for in order and need not be awaited: a write that fails (a key already stored for
 * `add`, a value that cannot be cloned, a full disk) fails the whole transaction, which then
 * rejects with its error and keeps nothing. A value that cannot be cloned throws at once.
 */
export interface Tables {
  get<T extends TableName>(table: T, key: Key): Promise<TableRows[T] | undefined>;
  getAll<T extends TableName>(table: T, query?: Query<TableRows[T]>): Promise<TableRows[T][]>;
  /** The primary keys of the rows `query` finds (one per index entry), in its order. */
  primaryKeys(table: TableName, query?: KeyQuery): Promise<Key[]>;
  /** The index keys `query` finds, in its order. */
  indexKeys(table: TableName, query: KeyQuery): Promise<Key[]>;
  /** How many index entries (rows, for the primary key) `query` finds. */
  count(table: TableName, query?: KeyQuery): Promise<number>;
  /** Stores `row` (replacing a row of its key); resolves with its key (a new one for auto-increment). */
  put<T extends TableName>(table: T, row: TableRows[T]): Promise<Key>;
  /** Stores `row`, failing the transaction if its key is stored. */
  add<T extends TableName>(table: T, row: TableRows[T]): Promise<Key>;
  delete(table: TableName, key: Key): Promise<void>;
  /** Deletes the rows `query` finds; resolves with how many. */
  deleteAll(table: TableName, query: KeyQuery): Promise<number>;
}

/** Where the store keeps its rows; the rules (`../rules/`) are written once over it. */
export interface TableAdapter {
  /**
   * Runs one store call, turning every failure into an `AirlockError` (a closed adapter
   * refuses with `storage-failed`). A call marked `retry` (the default: it can be repeated
   * without doing twice what it did once) may be tried again, once, when the connection was
   * lost under it; one marked `once` is not.
   */
  guard<T>(operation: string, body: () => Promise<T>, retry?: 'retry' | 'once'): Promise<T>;
  /**
   * Runs `body` in one transaction over `tables` (call inside `guard`): its writes are kept
   * together once it resolves and the transaction committed, or none of them. `body` must
   * not wait on anything but its reads (IndexedDB commits a transaction left idle).
   */
  transaction<R>(
    mode: 'r' | 'rw',
    tables: readonly TableName[],
    body: (tables: Tables) => Promise<R>,
  ): Promise<R>;
  /** Posts changes on the `airlock:<name>` channel; call after a write succeeded. */
  notify(...changes: StoreChange[]): void;
  /** The store's `onChange`. */
  listen: ChangeFeed['listen'];
  /**
   * Closes the adapter; later calls reject with `storage-failed`. Resolves once none of its
   * transactions is in flight, after which its worker may be ended without harm.
   */
  close(): Promise<void>;
}
