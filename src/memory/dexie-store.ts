import Dexie, { type Table, type Transaction } from 'dexie';
import { AirlockError, isAirlockError } from '../errors/airlock-error';
import type { ChatMessage } from '../protocol/chat';
import type { KnowledgeChunkRecord, KnowledgeDocumentRecord } from '../protocol/knowledge';
import { approxTokens } from './approx-tokens';
import { parseConversationExport } from './conversation-export-schema';
import {
  checkMemoryPatch,
  compareMemories,
  conversationScope,
  isExpired,
  memoryChange,
  newMemoryId,
  normalizeMemoryInput,
} from './memory-rules';
import { SCHEMA_V1, SCHEMA_V2, SCHEMA_V3 } from './schema-versions';
import { isConnectionLost, toStorageError } from './storage-errors';
import type {
  AuditRecord,
  ConversationExport,
  ConversationRecord,
  ConversationStore,
  MemoryRecord,
  MemoryScope,
  MessageRecord,
  RunRecord,
} from './store';
import { createChangeFeed, type StoreChange } from './store-change';

/** Where the store keeps its data. */
export interface OpenStoreOptions {
  /** The IndexedDB database name, also naming the change channel (`airlock:<name>`). Default `airlock`. */
  readonly name?: string;
  /** The IndexedDB implementation; defaults to the global one (tests pass fake-indexeddb). */
  readonly indexedDB?: IDBFactory;
  /** The `IDBKeyRange` matching `indexedDB`. */
  readonly IDBKeyRange?: typeof IDBKeyRange;
  /**
   * How long opening may stay blocked by another tab's connection at an older version
   * before calls fail with `storage-blocked` (default 5 000 ms). A slow upgrade that is not
   * blocked is waited for.
   */
  readonly openTimeoutMs?: number;
}

/** Default of `openTimeoutMs`. */
export const DEFAULT_OPEN_TIMEOUT_MS = 5_000;

/** The database as this module sees it: one typed table per record kind. */
type AirlockDatabase = Dexie & {
  conversations: Table<ConversationRecord, string>;
  messages: Table<MessageRecord, [string, number]>;
  memories: Table<MemoryRecord, string>;
  runs: Table<RunRecord, string>;
  /** Outbound auto-increment keys: the records stay exactly `AuditRecord`s. */
  audit: Table<AuditRecord, number>;
  documents: Table<KnowledgeDocumentRecord, string>;
  chunks: Table<KnowledgeChunkRecord, [string, number]>;
};

/** A message row as version 1 stored it: no token count yet. */
type MessageRowV1 = Omit<MessageRecord, 'approxTokens'> & { approxTokens?: number };

/** Fills in `approxTokens` on messages stored by version 1. */
function backfillTokenCounts(transaction: Transaction): PromiseLike<unknown> {
  return transaction
    .table<MessageRowV1, [string, number]>('messages')
    .toCollection()
    .modify((row) => {
      if (row.approxTokens === undefined) row.approxTokens = approxTokens(row.message);
    });
}

function openDatabase(name: string, options: OpenStoreOptions): AirlockDatabase {
  const db = new Dexie(name, {
    ...(options.indexedDB === undefined ? {} : { indexedDB: options.indexedDB }),
    ...(options.IDBKeyRange === undefined ? {} : { IDBKeyRange: options.IDBKeyRange }),
  }) as AirlockDatabase;
  // Shipped versions are never edited: append a version (with an upgrade) to change the schema.
  db.version(1).stores(SCHEMA_V1);
  db.version(2).stores(SCHEMA_V2).upgrade(backfillTokenCounts);
  db.version(3).stores(SCHEMA_V3);
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

function notFound(kind: string, id: string): AirlockError {
  return new AirlockError('not-found', `No ${kind} with id "${id}".`, { details: { id } });
}

function invalidInput(message: string): AirlockError {
  return new AirlockError('invalid-input', message);
}

/**
 * Opens the IndexedDB-backed store (through Dexie, which only this module imports).
 * Nothing touches the database until the first call. Every method is one transaction and
 * rejects with an `AirlockError`; every successful write posts a `StoreChange` on the
 * `BroadcastChannel` `airlock:<name>`. When another tab opens a newer schema version this
 * store closes, so that tab is not blocked, and later calls reject with `storage-failed`.
 */
export function openStore(options: OpenStoreOptions = {}): ConversationStore {
  const name = options.name ?? 'airlock';
  const openTimeoutMs = options.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
  const db = openDatabase(name, options);
  const feed = createChangeFeed(name);
  let closedBy: 'caller' | 'newer-version' | 'deleted' | undefined;
  let opening: Promise<void> | undefined;
  /** Once opened, a failed reopen (after a lost connection) is a storage failure, not a missing IndexedDB. */
  let everOpened = false;
  let blockedSince: number | undefined;

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

  const { conversations, messages, memories, runs, audit, documents, chunks } = db;
  const allTables = [conversations, messages, memories, runs, audit];

  const closedReasons = {
    'newer-version': 'the database was upgraded by a newer tab; reload this page',
    deleted: 'the database was deleted by another tab',
    caller: 'the store is closed',
  } as const;

  function closedError(operation: string): AirlockError {
    const reason = closedBy ?? 'caller';
    return new AirlockError(
      reason === 'newer-version' ? 'schema-changed' : 'storage-failed',
      `Storage failed while ${operation}: ${closedReasons[reason]}.`,
      {
        details: { operation, reason },
      },
    );
  }

  /**
   * Opens the database once (again after a lost connection). An open blocked by another
   * tab for `openTimeoutMs` is given up: `storage-blocked`. One that cannot start at all
   * (no IndexedDB, private mode) is `storage-unavailable`; a database already at a newer
   * version is `schema-changed`.
   */
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
    // Checked now and then rather than timed from the start: a long upgrade that nobody blocks is fine.
    const watch = setInterval(
      () => {
        if (blockedSince !== undefined && Date.now() - blockedSince >= openTimeoutMs) {
          gaveUp = true;
          db.close();
        }
      },
      Math.max(10, Math.min(250, openTimeoutMs / 4)),
    );
    try {
      await db.open();
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
      clearInterval(watch);
    }
  }

  /**
   * Runs one store operation, turning every failure into an `AirlockError`. An operation
   * marked `retry` (it can be repeated without doing twice what it did once) is tried again,
   * once, on a reopened connection when IndexedDB lost its connection (Safari's "server lost").
   */
  async function guard<T>(
    operation: string,
    body: () => Promise<T>,
    retry: 'retry' | 'once' = 'retry',
  ): Promise<T> {
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
  }

  function failure(error: unknown, operation: string): AirlockError {
    // A connection closed under the operation fails with a Dexie error; say why it closed.
    if (closedBy !== undefined && !isAirlockError(error)) return closedError(operation);
    return toStorageError(error, operation);
  }

  function notify(...changes: StoreChange[]): void {
    feed.post(changes);
  }

  function messageRange(conversationId: string) {
    return messages
      .where('[conversationId+seq]')
      .between([conversationId, 0], [conversationId, Infinity]);
  }

  function scopeRange(scope: MemoryScope) {
    return memories.where('[scope+key]').between([scope, Dexie.minKey], [scope, Dexie.maxKey]);
  }

  /** Deletes a conversation and all that belongs to it; call inside a rw transaction over all tables. */
  async function deleteCascade(conversationId: string): Promise<void> {
    await messageRange(conversationId).delete();
    await runs.where('conversationId').equals(conversationId).delete();
    await audit.where('conversationId').equals(conversationId).delete();
    await scopeRange(conversationScope(conversationId)).delete();
    await conversations.delete(conversationId);
  }

  function chunkRange(docId: string) {
    return chunks.where('[docId+index]').between([docId, 0], [docId, Infinity]);
  }

  const cascadeChanges = (conversationId: string): StoreChange[] =>
    (['messages', 'runs', 'audit', 'memories', 'conversations'] as const).map((table) => ({
      table,
      conversationId,
    }));

  return {
    ensureConversation: (id, title) =>
      guard('creating a conversation', async () => {
        if (typeof id !== 'string' || id === '')
          throw invalidInput('A conversation id must be a non-empty string.');
        let created = false;
        const row = await db.transaction('rw', conversations, async () => {
          const existing = await conversations.get(id);
          if (existing) return existing;
          const now = Date.now();
          const record: ConversationRecord = {
            id,
            title: title ?? '',
            createdAt: now,
            updatedAt: now,
            summary: '',
            summarizedThroughSeq: 0,
            lastSeq: 0,
          };
          await conversations.add(record);
          created = true;
          return record;
        });
        if (created) notify({ table: 'conversations', conversationId: id });
        return row;
      }),

    getConversation: (id) => guard('reading a conversation', () => conversations.get(id)),

    listConversations: () =>
      guard('listing conversations', () => conversations.orderBy('updatedAt').reverse().toArray()),

    // Renaming and summarising leave `updatedAt` alone: it orders conversations by activity.
    renameConversation: (id, title) =>
      guard('renaming a conversation', async () => {
        const updated = await conversations.update(id, { title });
        if (updated === 0) throw notFound('conversation', id);
        notify({ table: 'conversations', conversationId: id });
      }),

    // Idempotent: deleting what another tab already deleted is not an error.
    deleteConversation: (id) =>
      guard('deleting a conversation', async () => {
        await db.transaction('rw', allTables, () => deleteCascade(id));
        notify(...cascadeChanges(id));
      }),

    commitStep: (step) =>
      guard(
        'saving a step',
        async () => {
          const { conversationId, runId } = step;
          if (step.run !== undefined && step.run.conversationId !== conversationId)
            throw invalidInput(`Run "${step.run.id}" belongs to another conversation.`);
          if (step.audit?.some((record) => record.conversationId !== conversationId))
            throw invalidInput('An audit record belongs to another conversation.');
          const now = Date.now();
          const tables = [conversations, messages, runs, audit];
          const records = await db.transaction('rw', tables, async () => {
            // Not created here: a conversation deleted by another tab mid-run stays deleted.
            const conversation = await conversations.get(conversationId);
            if (!conversation) throw notFound('conversation', conversationId);
            const added = step.messages.map(
              (message: ChatMessage, index): MessageRecord => ({
                conversationId,
                seq: conversation.lastSeq + index + 1,
                runId,
                message,
                status: step.status ?? 'complete',
                approxTokens: approxTokens(message),
                at: now,
              }),
            );
            if (added.length > 0) {
              await messages.bulkAdd(added);
              await conversations.put({
                ...conversation,
                lastSeq: conversation.lastSeq + added.length,
                updatedAt: now,
              });
            }
            if (step.run !== undefined) await runs.put(step.run);
            if (step.audit !== undefined && step.audit.length > 0)
              await audit.bulkAdd([...step.audit]);
            return added;
          });
          const changes: StoreChange[] = [];
          if (records.length > 0)
            changes.push(
              { table: 'messages', conversationId },
              { table: 'conversations', conversationId },
            );
          if (step.run !== undefined) changes.push({ table: 'runs', conversationId });
          if (step.audit !== undefined && step.audit.length > 0)
            changes.push({ table: 'audit', conversationId });
          notify(...changes);
          return records;
        },
        'once',
      ),

    // Reads backwards along [conversationId+status+seq] and stops after `limit` rows:
    // the cost does not grow with the length of the conversation.
    recentMessages: (conversationId, limit) =>
      guard('reading recent messages', async () => {
        if (!(limit > 0)) return [];
        const newestFirst = await messages
          .where('[conversationId+status+seq]')
          .between([conversationId, 'complete', 0], [conversationId, 'complete', Infinity])
          .reverse()
          .limit(limit)
          .toArray();
        return newestFirst.reverse();
      }),

    messagesBetween: (conversationId, fromSeq, toSeq) =>
      guard('reading messages', async () => {
        if (!(fromSeq < toSeq)) return [];
        return messages
          .where('[conversationId+status+seq]')
          .between(
            [conversationId, 'complete', fromSeq],
            [conversationId, 'complete', toSeq],
            false,
            true,
          )
          .toArray();
      }),

    listMessages: (conversationId) =>
      guard('listing messages', () => messageRange(conversationId).toArray()),

    updateSummary: (conversationId, summary, throughSeq) =>
      guard('saving a summary', async () => {
        await db.transaction('rw', conversations, async () => {
          const conversation = await conversations.get(conversationId);
          if (!conversation) throw notFound('conversation', conversationId);
          if (!Number.isInteger(throughSeq) || throughSeq < 0 || throughSeq > conversation.lastSeq)
            throw invalidInput(
              `A summary must cover messages up to a seq from 0 to ${conversation.lastSeq}, not ${throughSeq}.`,
            );
          await conversations.put({ ...conversation, summary, summarizedThroughSeq: throughSeq });
        });
        notify({ table: 'conversations', conversationId });
      }),

    saveMemory: (input, now = Date.now()) =>
      guard('saving a memory', async () => {
        const memory = normalizeMemoryInput(input);
        const saved = await db.transaction('rw', memories, async () => {
          const existing = await memories
            .where('[scope+key]')
            .equals([memory.scope, memory.key])
            .first();
          const record: MemoryRecord = {
            ...memory,
            id: existing?.id ?? newMemoryId(),
            createdAt: existing?.createdAt ?? now,
            updatedAt: now,
          };
          await memories.put(record);
          return record;
        });
        notify(memoryChange(saved.scope));
        return saved;
      }),

    listMemories: (listOptions = {}) =>
      guard('listing memories', async () => {
        const now = listOptions.now ?? Date.now();
        const scopes =
          listOptions.scopes === undefined ? undefined : [...new Set(listOptions.scopes)];
        const found =
          scopes === undefined
            ? await memories.toArray()
            : await db.transaction('r', memories, async () =>
                (await Promise.all(scopes.map((scope) => scopeRange(scope).toArray()))).flat(),
              );
        const kept = listOptions.includeExpired
          ? found
          : found.filter((memory) => !isExpired(memory, now));
        return kept.sort(compareMemories);
      }),

    updateMemory: (id, patch) =>
      guard('updating a memory', async () => {
        checkMemoryPatch(patch);
        const updated = await db.transaction('rw', memories, async () => {
          const existing = await memories.get(id);
          if (!existing) throw notFound('memory', id);
          if (patch.key !== undefined && patch.key !== existing.key) {
            const clash = await memories
              .where('[scope+key]')
              .equals([existing.scope, patch.key])
              .first();
            if (clash)
              throw invalidInput(
                `A memory with key "${patch.key}" already exists in scope "${existing.scope}".`,
              );
          }
          const record: MemoryRecord = { ...existing, ...patch, updatedAt: Date.now() };
          await memories.put(record);
          return record;
        });
        notify(memoryChange(updated.scope));
        return updated;
      }),

    deleteMemory: (id) =>
      guard('deleting a memory', async () => {
        const deleted = await db.transaction('rw', memories, async () => {
          const existing = await memories.get(id);
          if (existing) await memories.delete(id);
          return existing;
        });
        if (!deleted) return;
        notify(memoryChange(deleted.scope));
      }),

    pruneExpired: (now = Date.now()) =>
      guard('pruning expired memories', async () => {
        const count = await memories.where('expiresAt').belowOrEqual(now).delete();
        if (count > 0) notify({ table: 'memories' });
        return count;
      }),

    // Conditional on the conversation: a late progress write of a run whose conversation was
    // deleted must not bring back a `running` row that start-up would then try to repair.
    putRun: (run) =>
      guard('saving a run', async () => {
        await db.transaction('rw', [conversations, runs], async () => {
          if ((await conversations.get(run.conversationId)) === undefined)
            throw notFound('conversation', run.conversationId);
          await runs.put(run);
        });
        notify({ table: 'runs', conversationId: run.conversationId });
      }),

    getRun: (id) => guard('reading a run', () => runs.get(id)),

    listRuns: (listOptions = {}) =>
      guard('listing runs', async () => {
        const { conversationId, statuses } = listOptions;
        const found =
          conversationId !== undefined
            ? await runs.where('conversationId').equals(conversationId).toArray()
            : statuses !== undefined
              ? await runs
                  .where('status')
                  .anyOf([...statuses])
                  .toArray()
              : await runs.toArray();
        const kept =
          statuses === undefined ? found : found.filter((run) => statuses.includes(run.status));
        return kept.sort((a, b) => b.startedAt - a.startedAt || b.updatedAt - a.updatedAt);
      }),

    // Newest first is reverse insertion order: equal index keys are ordered by the primary key.
    listAudit: (listOptions = {}) =>
      guard('reading the audit log', async () => {
        const { conversationId, runId, limit } = listOptions;
        let collection =
          runId !== undefined
            ? audit.where('runId').equals(runId)
            : conversationId !== undefined
              ? audit.where('conversationId').equals(conversationId)
              : audit.toCollection();
        if (runId !== undefined && conversationId !== undefined)
          collection = collection.filter((record) => record.conversationId === conversationId);
        const newestFirst = collection.reverse();
        return limit === undefined ? newestFirst.toArray() : newestFirst.limit(limit).toArray();
      }),

    exportConversation: (id) =>
      guard('exporting a conversation', () =>
        db.transaction(
          'r',
          [conversations, messages, memories],
          async (): Promise<ConversationExport> => {
            const conversation = await conversations.get(id);
            if (!conversation) throw notFound('conversation', id);
            return {
              format: 'airlock.conversation',
              version: 1,
              conversation,
              messages: await messageRange(id).toArray(),
              memories: await scopeRange(conversationScope(id)).toArray(),
            };
          },
        ),
      ),

    importConversation: (data, importOptions = {}) =>
      guard(
        'importing a conversation',
        async () => {
          // Everything is checked before the transaction, so bad input never starts a write.
          const value = parseConversationExport(data, importOptions);
          const { id } = value.conversation;
          // Token counts are derived data: recomputed, not taken from the file.
          const records = value.messages.map((record) => ({
            ...record,
            approxTokens: approxTokens(record.message),
          }));
          await db.transaction('rw', allTables, async () => {
            const existing = await conversations.get(id);
            if (existing && importOptions.replace !== true)
              throw invalidInput(
                `A conversation with id "${id}" exists; import with \`replace: true\` to replace it.`,
              );
            const clashes = await memories.bulkGet(value.memories.map((memory) => memory.id));
            const foreign = clashes.find(
              (memory) => memory !== undefined && memory.scope !== conversationScope(id),
            );
            if (foreign)
              throw invalidInput(
                `Memory id "${foreign.id}" already belongs to scope "${foreign.scope}".`,
              );
            // Replacing is deleting and importing in one transaction: a failure keeps the old one.
            // Without a conversation row, this clears leftovers filed under its id (memories
            // saved to its scope), which would otherwise clash with the imported keys.
            await deleteCascade(id);
            await messages.bulkAdd(records);
            await memories.bulkAdd([...value.memories]);
            await conversations.add(value.conversation);
          });
          notify(...cascadeChanges(id));
          return value.conversation;
        },
        'once',
      ),

    putDocument: (document, added) =>
      guard('storing a document', async () => {
        if (added.some((chunk) => chunk.docId !== document.id))
          throw invalidInput(`A chunk does not belong to document "${document.id}".`);
        // Delete and add in one transaction: a failure part-way aborts it, old chunks intact.
        await db.transaction('rw', [documents, chunks], async () => {
          await chunkRange(document.id).delete();
          await chunks.bulkAdd([...added]);
          await documents.put(document);
        });
        notify({ table: 'documents' }, { table: 'chunks' });
      }),

    deleteDocument: (id) =>
      guard('deleting a document', async () => {
        const existed = await db.transaction('rw', [documents, chunks], async () => {
          const existing = await documents.get(id);
          await chunkRange(id).delete();
          await documents.delete(id);
          return existing !== undefined;
        });
        if (existed) notify({ table: 'documents' }, { table: 'chunks' });
        return existed;
      }),

    listDocuments: () =>
      guard('listing documents', () => documents.orderBy('addedAt').reverse().toArray()),

    listChunkVectors: () =>
      guard('reading chunk vectors', async () => {
        const found: Pick<KnowledgeChunkRecord, 'docId' | 'index' | 'vector'>[] = [];
        // Rows read back are checked: a vector that is not a Float32Array would poison every search.
        await chunks.each((row) => {
          if (row.vector instanceof Float32Array)
            found.push({ docId: row.docId, index: row.index, vector: row.vector });
        });
        return found;
      }),

    getChunks: (keys) =>
      guard('reading chunks', () => chunks.bulkGet(keys.map(([docId, index]) => [docId, index]))),

    close: () => {
      closedBy ??= 'caller';
      db.close();
      feed.close();
    },
  };
}
