/**
 * The IndexedDB schema, version by version, as Dexie stores strings (primary key first,
 * then indexes; `&` unique, `++` auto-increment, `[a+b]` compound).
 *
 * A version is never edited once shipped: browsers that opened it keep its layout, and
 * only a new version with an upgrade moves them on. Change the schema by appending one.
 */

/** Dexie stores strings of one schema version; a table left out keeps its previous layout. */
export type StoresSpec = Readonly<Record<string, string | null>>;

/**
 * Version 1, as first shipped. Messages are keyed by conversation and position; runs and
 * audit records are found by conversation (and run); memories are unique per scope and key.
 * Audit records have an outbound auto-increment key: insertion order, newest last.
 */
export const SCHEMA_V1: StoresSpec = {
  conversations: 'id, updatedAt',
  messages: '[conversationId+seq]',
  memories: 'id, &[scope+key], expiresAt',
  runs: 'id, conversationId, status',
  audit: '++, conversationId, runId, at',
};

/**
 * Version 2: history windowing. Messages gain `approxTokens` (not indexed; backfilled by
 * the upgrade) and an index that reads the newest complete messages of a conversation
 * without reading the rest.
 */
export const SCHEMA_V2: StoresSpec = {
  messages: '[conversationId+seq], [conversationId+status+seq]',
};

/**
 * Version 3: knowledge. Documents by id; their chunks (text and `Float32Array` vector)
 * keyed by document and position, so replacing or removing a document is one key range.
 * New tables only: nothing to upgrade.
 */
export const SCHEMA_V3: StoresSpec = {
  documents: 'id, addedAt',
  chunks: '[docId+index]',
};

/**
 * Version 4: attachments. Images and files of runs' inputs, keyed by the SHA-256 of their
 * bytes (stored once however often they are sent), with a multi-entry index of the
 * conversations referring to them, so deleting a conversation finds the ones it held.
 * A new table only: nothing to upgrade.
 */
export const SCHEMA_V4: StoresSpec = {
  attachments: 'hash, *conversationIds',
};

/**
 * Version 5: knowledge vectors in packed blocks. A `vectorBlocks` row holds up to 1,000
 * vectors in one `ArrayBuffer` with each one's document and position, found by a
 * multi-entry index of its documents (to remove one) and by `count` (to merge small ones),
 * so the index loads in one read of few rows. The upgrade moves every chunk's vector into
 * blocks and leaves the chunk rows their text.
 */
export const SCHEMA_V5: StoresSpec = {
  vectorBlocks: '++id, *docIds, count',
};

/**
 * Version 6: conversation search. The words of each user and assistant message, keyed like
 * the message, with a multi-entry index of them: a query word is a key range of the index,
 * whose primary keys name the conversation and message without reading either. Kept apart
 * from the message rows, which stay exactly as replayed and exported. The upgrade indexes
 * every stored message.
 */
export const SCHEMA_V6: StoresSpec = {
  messageTerms: '[conversationId+seq], *terms',
};

/**
 * Version 7: the conversation list by pages, and knowledge that answers before its floats
 * are read.
 * - An index of (`updatedAt`, `id`) gives each conversation a place of its own in the list,
 *   so a page starts right after the last one shown (`updatedAt` alone ties). IndexedDB
 *   builds it.
 * - `vectorCodes` holds an int8 copy of each vector block under the block's id (a quarter of
 *   its bytes): a new agent worker searches with these while it reads the floats. The
 *   upgrade writes the copy of every stored block.
 */
export const SCHEMA_V7: StoresSpec = {
  conversations: 'id, updatedAt, [updatedAt+id]',
  vectorCodes: 'id',
};

/**
 * Version 8: memory proposals. What `memory.learn` holds for the app in confirm mode, by id,
 * found by conversation (to list them, and to delete them with it). A new table only:
 * nothing to upgrade.
 */
export const SCHEMA_V8: StoresSpec = {
  proposals: 'id, conversationId',
};

/**
 * Version 9: sealed run rows. The key the agent worker seals run rows with (a
 * non-extractable `CryptoKey`), by name, made when first needed. A new table only: runs
 * stored before it have no seal and are not resumed (see `RunSeal`).
 */
export const SCHEMA_V9: StoresSpec = {
  sealKeys: 'name',
};

/**
 * Version 10: refused turns. A message row's `status` may be `refused` (the model endpoint
 * refused the request carrying it): the existing `[conversationId+status+seq]` index already
 * leaves such rows out of every context, so no table or index changes and no row needs an
 * upgrade. The version moves on so that a tab of an older version, which would read a
 * `refused` row as corrupt, closes its connection (`schema-changed`) instead.
 */
export const SCHEMA_V10: StoresSpec = {};

/** Every version's stores, oldest first: version `n` is at index `n - 1`. */
export const SCHEMA_VERSIONS: readonly StoresSpec[] = [
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
];

/** The newest schema version; opening a store upgrades to it. */
export const CURRENT_SCHEMA_VERSION = SCHEMA_VERSIONS.length;
