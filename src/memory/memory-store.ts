import { AirlockError } from '../errors/airlock-error';
import { estimateMessageTokens } from '../model/estimate-tokens';
import type { KnowledgeChunkRecord, KnowledgeDocumentRecord } from '../protocol/knowledge';
import { DEFAULT_DATABASE } from '../protocol/memory';
import {
  exportedAttachments,
  hasParts,
  readImportedAttachments,
  referencedHashes,
} from './conversation-attachments';
import { listedAfter, newestFirst } from './conversation-order';
import { revised, type StoredConversation, withoutRevision } from './conversation-revision';
import {
  checkMemoryPatch,
  compareMemories,
  conversationOfScope,
  conversationScope,
  isExpired,
  memoryChange,
  newMemoryId,
  normalizeMemoryInput,
} from './memory-rules';
import { newConversation } from './new-conversation';
import { memoryToDelete } from './proposal-target';
import { newRunSealKey } from './run-seal';
import { messageTerms, queryTerms, searchableText, searchSnippet } from './search-terms';
import { toStorageError } from './storage-errors';
import type {
  AttachmentData,
  AttachmentRecord,
  AuditRecord,
  ConversationSearchHit,
  ConversationStore,
  MemoryInput,
  MemoryProposal,
  MemoryRecord,
  MessageRecord,
  RunRecord,
  WrittenStep,
} from './store';
import { cascadeChanges, createChangeFeed, type StoreChange } from './store-change';
import { invalidInput, notFound } from './store-failures';
import { codesOfBlock, packVectorBlocks } from './vector-blocks';

/** Where the in-memory store posts its changes. */
export interface MemoryStoreOptions {
  /** Names the change channel (`airlock:<name>`), as the database it stands in for would. Default `airlock`. */
  readonly name?: string;
}

/**
 * A `ConversationStore` in memory, for browsers where IndexedDB cannot be opened (private
 * modes, disabled storage): it behaves as the Dexie store does (the same unit tests run
 * against both) and keeps nothing once the agent is gone. Every method is atomic (it
 * changes its maps without awaiting in between) and copies rows in and out, as IndexedDB
 * does, so a caller can never edit what is stored by holding on to a row.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): ConversationStore {
  const feed = createChangeFeed(options.name ?? DEFAULT_DATABASE);
  const conversations = new Map<string, StoredConversation>();
  const stepListeners = new Set<(step: WrittenStep) => void>();
  /** Per conversation, ordered by seq. */
  const messages = new Map<string, MessageRecord[]>();
  const memories = new Map<string, MemoryRecord>();
  const runs = new Map<string, RunRecord>();
  const proposals = new Map<string, MemoryProposal>();
  let sealKey: Promise<CryptoKey> | undefined;
  /** Insertion order, oldest first. */
  let audit: AuditRecord[] = [];
  const documents = new Map<string, KnowledgeDocumentRecord>();
  /** Per document, ordered by index. */
  const chunks = new Map<string, KnowledgeChunkRecord[]>();
  /** By hash; each lists the conversations that refer to it. */
  const attachments = new Map<string, AttachmentRecord>();
  let closed = false;

  const copy = <T>(value: T): T => structuredClone(value);

  /** Runs one operation: closed stores refuse, and every result leaves as a copy. */
  async function guard<T>(operation: string, body: () => T): Promise<T> {
    if (closed)
      throw new AirlockError(
        'storage-failed',
        `Storage failed while ${operation}: the store is closed.`,
        {
          details: { operation, reason: 'caller' },
        },
      );
    try {
      return copy(body());
    } catch (error) {
      // e.g. a DataCloneError for a value IndexedDB could not store either.
      throw toStorageError(error, operation);
    }
  }

  const notify = (...changes: StoreChange[]) => feed.post(changes);

  /** The vectors in blocks, as the Dexie store keeps them (packed on each call: read once). */
  const vectorBlocks = () =>
    packVectorBlocks(
      [...documents.keys()]
        .sort()
        .flatMap((docId) => chunks.get(docId) ?? [])
        .map(({ docId, index, vector }) => ({ docId, index, vector })),
    ).map((block, index) => ({ ...block, id: index + 1 }));

  const completeMessages = (conversationId: string) =>
    (messages.get(conversationId) ?? []).filter((record) => record.status === 'complete');

  function findMemory(scope: string, key: string): MemoryRecord | undefined {
    for (const memory of memories.values())
      if (memory.scope === scope && memory.key === key) return memory;
    return undefined;
  }

  /** Inserts or replaces (same scope and key) a memory; throws for one the rules refuse. */
  function putMemory(input: MemoryInput, now: number): MemoryRecord {
    const memory = normalizeMemoryInput(input);
    const existing = findMemory(memory.scope, memory.key);
    const record: MemoryRecord = {
      ...memory,
      id: existing?.id ?? newMemoryId(),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    memories.set(record.id, record);
    reviseConversationOf(record.scope);
    return record;
  }

  /** Gives the conversation a memory of `scope` belongs to a new revision token, if it is stored. */
  function reviseConversationOf(scope: string): void {
    const conversationId = conversationOfScope(scope);
    const row = conversationId === undefined ? undefined : conversations.get(conversationId);
    if (row) conversations.set(row.id, revised(row));
  }

  function deleteCascade(conversationId: string): void {
    messages.delete(conversationId);
    for (const [id, row] of proposals)
      if (row.conversationId === conversationId) proposals.delete(id);
    for (const [id, run] of runs) if (run.conversationId === conversationId) runs.delete(id);
    audit = audit.filter((record) => record.conversationId !== conversationId);
    const scope = conversationScope(conversationId);
    for (const [id, memory] of memories) if (memory.scope === scope) memories.delete(id);
    for (const [hash, row] of attachments) {
      if (!row.conversationIds.includes(conversationId)) continue;
      const others = row.conversationIds.filter((id) => id !== conversationId);
      if (others.length === 0) attachments.delete(hash);
      else attachments.set(hash, { ...row, conversationIds: others });
    }
    conversations.delete(conversationId);
  }

  /** Stores attachments (copied) for a conversation; a known hash only gains the conversation. */
  function holdAttachments(conversationId: string, added: readonly AttachmentData[]): void {
    for (const item of added) {
      const holders = attachments.get(item.hash)?.conversationIds ?? [];
      attachments.set(item.hash, {
        ...copy(item),
        conversationIds: holders.includes(conversationId) ? holders : [...holders, conversationId],
      });
    }
  }

  const store: ConversationStore = {
    ensureConversation: (id, title) =>
      guard('creating a conversation', () => {
        if (typeof id !== 'string' || id === '')
          throw invalidInput('A conversation id must be a non-empty string.');
        const existing = conversations.get(id);
        if (existing) return existing;
        const record = newConversation(id, title, Date.now());
        conversations.set(id, copy(record));
        notify({ table: 'conversations', conversationId: id });
        return record;
      }),

    getConversation: (id) => guard('reading a conversation', () => conversations.get(id)),

    listConversations: ({ limit, after } = {}) =>
      guard('listing conversations', () =>
        [...conversations.values()]
          .filter((row) => listedAfter(row, after))
          .sort(newestFirst)
          .slice(0, limit),
      ),

    // The same matching as the IndexedDB store's index, by reading every message.
    searchConversations: (query, limit) =>
      guard('searching conversations', () => {
        const terms = queryTerms(query);
        if (terms.length === 0) return [];
        const hits: ConversationSearchHit[] = [];
        for (const conversation of conversations.values()) {
          const match = (messages.get(conversation.id) ?? []).findLast((record) => {
            const words = messageTerms(record.message);
            return terms.every((term) => words.some((word) => word.startsWith(term)));
          });
          if (match) {
            const snippet = searchSnippet(searchableText(match.message), terms);
            hits.push({ conversation, seq: match.seq, snippet });
          }
        }
        return hits.sort((a, b) => newestFirst(a.conversation, b.conversation)).slice(0, limit);
      }),

    renameConversation: (id, title) =>
      guard('renaming a conversation', () => {
        const conversation = conversations.get(id);
        if (!conversation) throw notFound('conversation', id);
        conversations.set(id, { ...conversation, title });
        notify({ table: 'conversations', conversationId: id });
      }),

    deleteConversation: (id) =>
      guard('deleting a conversation', () => {
        deleteCascade(id);
        notify(...cascadeChanges(id));
      }),

    commitStep: (step) =>
      guard('saving a step', () => {
        const { conversationId, runId } = step;
        if (step.run !== undefined && step.run.conversationId !== conversationId)
          throw invalidInput(`Run "${step.run.id}" belongs to another conversation.`);
        if (step.audit?.some((record) => record.conversationId !== conversationId))
          throw invalidInput('An audit record belongs to another conversation.');
        const stored = conversations.get(conversationId);
        // Created only by a new run's first commit: one deleted mid-run stays deleted.
        if (!stored && !step.create) throw notFound('conversation', conversationId);
        const now = Date.now();
        const conversation = stored ?? newConversation(conversationId, step.create?.title, now);
        const added = step.messages.map(
          (message, index): MessageRecord => ({
            conversationId,
            seq: conversation.lastSeq + index + 1,
            runId,
            message: copy(message),
            status: step.status ?? 'complete',
            approxTokens: estimateMessageTokens(message),
            at: now,
          }),
        );
        // Everything is copied before anything changes: a value that cannot be stored writes nothing.
        const run = step.run === undefined ? undefined : copy(step.run);
        const records = copy(step.audit ?? []);
        const held = copy(step.attachments ?? []);
        const changes: StoreChange[] = [];
        if (held.length > 0) {
          holdAttachments(conversationId, held);
          changes.push({ table: 'attachments', conversationId });
        }
        if (added.length > 0) {
          messages.set(conversationId, [...(messages.get(conversationId) ?? []), ...added]);
          changes.push({ table: 'messages', conversationId });
        }
        let after = conversation;
        if (added.length > 0 || !stored) {
          after = { ...conversation, lastSeq: conversation.lastSeq + added.length, updatedAt: now };
          conversations.set(conversationId, after);
          changes.push({ table: 'conversations', conversationId });
        }
        if (run !== undefined) {
          runs.set(run.id, run);
          changes.push({ table: 'runs', conversationId });
        }
        if (records.length > 0) {
          audit.push(...records);
          changes.push({ table: 'audit', conversationId });
        }
        notify(...changes);
        const scope = conversationScope(conversationId);
        const written = copy({
          conversationId,
          added,
          before: stored,
          after,
          ...(stored
            ? {}
            : { createdEmpty: ![...memories.values()].some((memory) => memory.scope === scope) }),
        });
        for (const listener of stepListeners) listener(written);
        return added;
      }),

    recentMessages: (conversationId, limit) =>
      guard('reading recent messages', () =>
        limit > 0 ? completeMessages(conversationId).slice(-limit) : [],
      ),

    messagesBetween: (conversationId, fromSeq, toSeq) =>
      guard('reading messages', () =>
        completeMessages(conversationId).filter(
          (record) => record.seq > fromSeq && record.seq <= toSeq,
        ),
      ),

    listMessages: (conversationId) =>
      guard('listing messages', () => messages.get(conversationId) ?? []),

    updateSummary: (conversationId, summary, throughSeq) =>
      guard('saving a summary', () => {
        const conversation = conversations.get(conversationId);
        if (!conversation) throw notFound('conversation', conversationId);
        if (!Number.isInteger(throughSeq) || throughSeq < 0 || throughSeq > conversation.lastSeq)
          throw invalidInput(
            `A summary must cover messages up to a seq from 0 to ${conversation.lastSeq}, not ${throughSeq}.`,
          );
        conversations.set(
          conversationId,
          revised({ ...conversation, summary, summarizedThroughSeq: throughSeq }),
        );
        notify({ table: 'conversations', conversationId });
      }),

    saveMemory: (input, now = Date.now()) =>
      guard('saving a memory', () => {
        const record = putMemory(input, now);
        notify(memoryChange(record.scope));
        return record;
      }),

    listMemories: (listOptions = {}) =>
      guard('listing memories', () => {
        const now = listOptions.now ?? Date.now();
        const scopes = listOptions.scopes === undefined ? undefined : new Set(listOptions.scopes);
        return [...memories.values()]
          .filter((memory) => scopes === undefined || scopes.has(memory.scope))
          .filter((memory) => listOptions.includeExpired || !isExpired(memory, now))
          .sort(compareMemories);
      }),

    updateMemory: (id, patch, check = (row) => row as MemoryRecord) =>
      guard('updating a memory', () => {
        checkMemoryPatch(patch);
        const existing = memories.get(id);
        if (!existing) throw notFound('memory', id);
        if (patch.key !== undefined && patch.key !== existing.key) {
          if (findMemory(existing.scope, patch.key))
            throw invalidInput(
              `A memory with key "${patch.key}" already exists in scope "${existing.scope}".`,
            );
        }
        const record = check({ ...existing, ...patch, updatedAt: Date.now() });
        memories.set(id, record);
        reviseConversationOf(record.scope);
        notify(memoryChange(record.scope));
        return record;
      }),

    deleteMemory: (id) =>
      guard('deleting a memory', () => {
        const existing = memories.get(id);
        if (!existing) return;
        memories.delete(id);
        reviseConversationOf(existing.scope);
        notify(memoryChange(existing.scope));
      }),

    saveProposals: (rows) =>
      guard('saving memory proposals', () => {
        const ids = new Set(rows.map((row) => row.conversationId));
        for (const id of ids) if (!conversations.has(id)) throw notFound('conversation', id);
        // As IndexedDB's key constraint fails the whole batch: a storage failure, nothing stored.
        const batch = new Set<string>();
        for (const row of rows) {
          if (proposals.has(row.id) || batch.has(row.id))
            throw new AirlockError(
              'storage-failed',
              `A memory proposal "${row.id}" is already stored.`,
            );
          batch.add(row.id);
        }
        for (const row of rows) proposals.set(row.id, copy(row));
        notify(
          ...[...ids].map((conversationId) => ({ table: 'proposals' as const, conversationId })),
        );
      }),

    listProposals: ({ conversationId } = {}) =>
      guard('listing memory proposals', () =>
        [...proposals.values()]
          .filter((row) => conversationId === undefined || row.conversationId === conversationId)
          .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
      ),

    acceptProposal: (id, check, now = Date.now()) =>
      guard('accepting a memory proposal', () => {
        const row = proposals.get(id);
        if (row === undefined) throw notFound('memory proposal', id);
        const proposal = check(row);
        const saved = proposal.change === 'save' ? putMemory(proposal.memory, now) : undefined;
        const deleted =
          proposal.change === 'delete'
            ? memoryToDelete(proposal, memories.get(proposal.memory.id))
            : undefined;
        if (deleted) {
          memories.delete(deleted.id);
          reviseConversationOf(deleted.scope);
        }
        proposals.delete(id);
        const changed = saved ?? deleted;
        notify(
          { table: 'proposals', conversationId: proposal.conversationId },
          ...(changed ? [memoryChange(changed.scope)] : []),
        );
        return saved;
      }),

    dismissProposal: (id) =>
      guard('dismissing a memory proposal', () => {
        const row = proposals.get(id);
        if (row === undefined) return;
        proposals.delete(id);
        notify({ table: 'proposals', conversationId: row.conversationId });
      }),

    pruneExpired: (now = Date.now()) =>
      guard('pruning expired memories', () => {
        let count = 0;
        for (const [id, memory] of memories) {
          if (isExpired(memory, now)) {
            memories.delete(id);
            count += 1;
          }
        }
        if (count > 0) notify({ table: 'memories' });
        return count;
      }),

    // Conditional on the conversation, as in the Dexie store: no write brings back a deleted one's rows.
    // A step with nothing but the run's checkpoint, as the Dexie store writes it.
    putRun: async (run) => {
      await store.commitStep({
        conversationId: run.conversationId,
        runId: run.id,
        messages: [],
        run,
      });
    },

    getRun: (id) => guard('reading a run', () => runs.get(id)),

    // Made by the first call; kept, as the database keeps it, as long as the store.
    runSealKey: async () => {
      await guard('reading the run seal key', () => undefined);
      sealKey ??= newRunSealKey();
      return sealKey;
    },

    listRuns: (listOptions = {}) =>
      guard('listing runs', () => {
        const { conversationId, statuses } = listOptions;
        return [...runs.values()]
          .filter((run) => conversationId === undefined || run.conversationId === conversationId)
          .filter((run) => statuses === undefined || statuses.includes(run.status))
          .sort((a, b) => b.startedAt - a.startedAt || b.updatedAt - a.updatedAt);
      }),

    listAudit: (listOptions = {}) =>
      guard('reading the audit log', () => {
        const { conversationId, runId, limit } = listOptions;
        const newestFirst = audit
          .filter(
            (record) =>
              (runId === undefined || record.runId === runId) &&
              (conversationId === undefined || record.conversationId === conversationId),
          )
          .reverse();
        return limit === undefined ? newestFirst : newestFirst.slice(0, Math.max(0, limit));
      }),

    exportConversation: (id) =>
      guard('exporting a conversation', () => {
        const conversation = conversations.get(id);
        if (!conversation) throw notFound('conversation', id);
        const scope = conversationScope(id);
        const records = messages.get(id) ?? [];
        const exported = {
          format: 'airlock.conversation' as const,
          version: 1 as const,
          conversation: withoutRevision(conversation),
          messages: records,
          memories: [...memories.values()]
            .filter((memory) => memory.scope === scope)
            .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
        };
        if (!hasParts(records)) return exported;
        return {
          ...exported,
          version: 2 as const,
          attachments: exportedAttachments(
            referencedHashes(records).map((hash) => attachments.get(hash)),
          ),
        };
      }),

    importConversation: async (data, importOptions = {}) => {
      const { parseConversationExport } = await import('./conversation-export-schema');
      const value = parseConversationExport(data, importOptions);
      const imported = await readImportedAttachments(value);
      return guard('importing a conversation', () => {
        const { id } = value.conversation;
        if (conversations.has(id) && importOptions.replace !== true)
          throw invalidInput(
            `A conversation with id "${id}" exists; import with \`replace: true\` to replace it.`,
          );
        const foreign = value.memories
          .map((memory) => memories.get(memory.id))
          .find((memory) => memory !== undefined && memory.scope !== conversationScope(id));
        if (foreign)
          throw invalidInput(
            `Memory id "${foreign.id}" already belongs to scope "${foreign.scope}".`,
          );
        deleteCascade(id);
        messages.set(
          id,
          value.messages
            .map((record) => ({
              ...copy(record),
              approxTokens: estimateMessageTokens(record.message),
            }))
            .sort((a, b) => a.seq - b.seq),
        );
        for (const memory of value.memories) memories.set(memory.id, copy(memory));
        holdAttachments(id, imported);
        conversations.set(id, revised(copy(value.conversation)));
        notify(...cascadeChanges(id));
        return value.conversation;
      });
    },

    getAttachments: (hashes) =>
      guard('reading attachments', () => hashes.map((hash) => attachments.get(hash))),

    putDocument: (document, added) =>
      guard('storing a document', () => {
        if (added.some((chunk) => chunk.docId !== document.id))
          throw invalidInput(`A chunk does not belong to document "${document.id}".`);
        chunks.set(
          document.id,
          [...added].map((chunk) => copy(chunk)).sort((a, b) => a.index - b.index),
        );
        documents.set(document.id, copy(document));
        notify({ table: 'documents' }, { table: 'chunks' });
      }),

    deleteDocument: (id) =>
      guard('deleting a document', () => {
        const existed = documents.delete(id);
        chunks.delete(id);
        if (existed) notify({ table: 'documents' }, { table: 'chunks' });
        return existed;
      }),

    listDocuments: () =>
      guard('listing documents', () =>
        [...documents.values()].sort((a, b) => b.addedAt - a.addedAt),
      ),

    listVectorBlocks: ({ after = 0, limit } = {}) =>
      guard('reading knowledge vectors', () =>
        vectorBlocks()
          .filter((block) => block.id > after)
          .slice(0, limit),
      ),

    listVectorCodes: () =>
      guard('reading knowledge vector codes', () =>
        vectorBlocks().map((block) => codesOfBlock(block.id, block)),
      ),

    getChunks: (keys) =>
      guard('reading chunks', () =>
        keys.map(([docId, index]) => {
          const found = chunks.get(docId)?.find((chunk) => chunk.index === index);
          return found && { docId: found.docId, index: found.index, text: found.text };
        }),
      ),

    // The same three reads, each from the maps as they are.
    conversationIds: () =>
      guard('listing the conversations', () => {
        const prefix = conversationScope('');
        const ids = new Set(conversations.keys());
        for (const memory of memories.values())
          if (memory.scope.startsWith(prefix)) ids.add(memory.scope.slice(prefix.length));
        return [...ids];
      }),
    onChange: (listener) => feed.listen(listener),
    onStepWritten(listener) {
      stepListeners.add(listener);
      return () => stepListeners.delete(listener);
    },

    readContext: async ({ conversationId, recent, scopes, create }) => {
      const [rows, conversation, memoryRows] = await Promise.all([
        store.recentMessages(conversationId, recent),
        create ? store.ensureConversation(conversationId) : store.getConversation(conversationId),
        store.listMemories({ scopes }),
      ]);
      return { recent: rows, conversation, memories: memoryRows };
    },

    close: async () => {
      closed = true;
      feed.close();
    },
  };
  return store;
}
