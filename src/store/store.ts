import type { ChatMessage } from '../protocol/chat';
import type {
  KnowledgeChunkRecord,
  KnowledgeChunkText,
  KnowledgeDocumentRecord,
} from '../protocol/knowledge';
import type {
  AttachmentData,
  AttachmentRecord,
  AuditRecord,
  ConversationExport,
  ConversationListOptions,
  ConversationRecord,
  ConversationSearchHit,
  ImportOptions,
  MemoryInput,
  MemoryProposal,
  MemoryRecord,
  MemoryScope,
  MessageRecord,
  RunRecord,
} from '../protocol/memory';
import type { StoredConversation } from './conversation-revision';
import type { ChangeListener } from './store-change';

export type {
  KnowledgeChunkRecord,
  KnowledgeChunkText,
  KnowledgeDocumentRecord,
} from '../protocol/knowledge';
export type {
  AttachmentData,
  AttachmentRecord,
  AuditRecord,
  ConversationExport,
  ConversationRecord,
  ConversationSearchHit,
  ExportedAttachment,
  ImportOptions,
  MemoryInput,
  MemoryProposal,
  MemoryRecord,
  MemoryScope,
  MessageRecord,
  PendingApproval,
  RunRecord,
} from '../protocol/memory';

/** A step a store wrote (`commitStep`, `putRun`): its messages, and its conversation's row around it. */
export interface WrittenStep {
  readonly conversationId: string;
  readonly added: readonly MessageRecord[];
  /** The row as the write found it; undefined when the write created it. */
  readonly before: StoredConversation | undefined;
  readonly after: StoredConversation;
  /**
   * For a step that created the conversation: whether the store had no memory of its scope
   * then, so that the step's messages are all its context holds besides lasting memories.
   */
  readonly createdEmpty?: boolean;
}

/**
 * Everything Airlock keeps, behind one interface: its rules are written once (`rules/`) over
 * a table adapter (`tables/`: IndexedDB, or memory where IndexedDB cannot be opened), and only
 * `tables/indexeddb-tables.ts` and `dexie/` know IndexedDB. Every method is one transaction (steps and checkpoints of
 * runs going on at once may share one; each is still all or nothing); none stays open
 * across a model or tool call. Failures reject with `AirlockError` (`storage-full`,
 * `storage-failed`, `invalid-input`, `not-found`).
 */
export interface ConversationStore {
  /** Creates the conversation if it does not exist; returns its row. */
  ensureConversation(id: string, title?: string): Promise<ConversationRecord>;
  getConversation(id: string): Promise<ConversationRecord | undefined>;
  /** Newest `updatedAt` first (then by id, last first), a page at a time if asked. */
  listConversations(options?: ConversationListOptions): Promise<ConversationRecord[]>;
  /**
   * The conversations with a user or assistant message in which every word of `query`
   * begins a word (case and accents aside), newest `updatedAt` first, at most `limit`.
   * A query without words finds nothing.
   */
  searchConversations(query: string, limit: number): Promise<ConversationSearchHit[]>;
  renameConversation(id: string, title: string): Promise<void>;
  /**
   * Deletes the conversation with its messages, runs, audit records, conversation-scoped
   * memories, and the attachments no other conversation refers to.
   */
  deleteConversation(id: string): Promise<void>;

  /**
   * Appends messages (numbered after `lastSeq`) and, in the same transaction, writes the
   * run's checkpoint and audit records: one completed step, durably, or nothing.
   */
  commitStep(step: {
    readonly conversationId: string;
    readonly runId: string;
    readonly messages: readonly ChatMessage[];
    readonly status?: MessageRecord['status'];
    readonly run?: RunRecord;
    readonly audit?: readonly AuditRecord[];
    /**
     * Attachments the messages refer to: stored (once per hash) and marked as this
     * conversation's in the same transaction, so a message never refers to bytes not stored.
     */
    readonly attachments?: readonly AttachmentData[];
    /**
     * Given for a new run's first commit: a conversation that is not stored is created, with
     * this title, in the same transaction as the input. Without it a missing conversation
     * fails the commit with `not-found` (one deleted mid-run stays deleted).
     */
    /**
     * A retry's input: the refused turn of this run (see `dropRefused`) is removed in the
     * same transaction as this step is written, so the conversation holds the one or the
     * other, never neither. A turn dropped meanwhile removes nothing; a run whose messages
     * are not refused fails the step with `turn-not-refused` and writes nothing.
     */
    readonly replacesRefused?: string;
    readonly create?: {
      readonly title: string | undefined;
      /**
       * The caller takes the conversation for one that is not stored (nothing it knows of
       * has it): a store may then write without reading its row first, and write again the
       * usual way if it was stored after all. A hint only: the outcome is the same.
       */
      readonly likelyNew?: boolean;
    };
  }): Promise<MessageRecord[]>;
  /**
   * Stored attachments by hash, in the same order (`undefined` for one that is not stored).
   * Rows are returned as read: the caller checks them.
   */
  getAttachments(hashes: readonly string[]): Promise<(AttachmentRecord | undefined)[]>;
  /** The newest `limit` complete messages, oldest first; reads only those rows. */
  recentMessages(conversationId: string, limit: number): Promise<MessageRecord[]>;
  /**
   * Ids of the conversations a new run's context would find anything of: the stored
   * conversations, and those with memories of their own scope. A run of any other id starts
   * from nothing but the lasting memories.
   */
  conversationIds(): Promise<string[]>;
  /**
   * Calls `listener` with each change this store makes, at once after its write, and each
   * change other stores of the same database post (other tabs, other workers), as it
   * arrives. Returns the listener's removal.
   */
  onChange(listener: ChangeListener): () => void;
  /**
   * Calls `listener` with each step this store writes, once it committed and before its
   * `commitStep` settles. Returns the listener's removal. Optional: a store without it (or
   * without revision tokens on its rows, see `StoredConversation`) leaves the agent worker
   * to read a conversation's context from it before every run.
   */
  onStepWritten?(listener: (step: WrittenStep) => void): () => void;
  /**
   * What a run's context is built from, in one transaction: the newest `recent` complete
   * messages (as `recentMessages`), the conversation's row (undefined when it is not stored;
   * with `create`, added first as by `ensureConversation`), and the unexpired memories of
   * `scopes` (as `listMemories`).
   */
  readContext(request: {
    readonly conversationId: string;
    readonly recent: number;
    readonly scopes: readonly MemoryScope[];
    readonly create: boolean;
  }): Promise<{
    recent: MessageRecord[];
    conversation: ConversationRecord | undefined;
    memories: MemoryRecord[];
  }>;
  /** Complete messages with `fromSeq < seq <= toSeq`, oldest first. */
  messagesBetween(conversationId: string, fromSeq: number, toSeq: number): Promise<MessageRecord[]>;
  /** Every message, oldest first, interrupted and refused ones included (for display and export). */
  listMessages(conversationId: string): Promise<MessageRecord[]>;
  /**
   * Marks every message run `runId` stored in the conversation `refused` (the model endpoint
   * refused the request carrying them), in one transaction that gives the conversation a new
   * revision token; answers their seqs (none when the conversation or its rows are gone).
   * Refused messages stay listed and are never read into a context again.
   */
  refuseRun(conversationId: string, runId: string): Promise<number[]>;
  /**
   * Deletes the refused turn of run `runId` (every refused turn of the conversation when
   * undefined), in one transaction with a new revision token: the messages after it move down
   * so `seq` still runs from 1 without gaps (the summary pointer with them), and attachments
   * only the turn referred to are released. Answers the ids of the runs whose turns went (none
   * when nothing was left to drop: idempotent). A run that is unknown, of another conversation
   * or not refused fails with `turn-not-refused`, a missing conversation with `not-found`;
   * either changes nothing. Run rows and audit records stay.
   */
  dropRefused(conversationId: string, runId?: string): Promise<string[]>;
  updateSummary(conversationId: string, summary: string, throughSeq: number): Promise<void>;

  /** Inserts or replaces (same scope and key) a memory. */
  saveMemory(input: MemoryInput, now?: number): Promise<MemoryRecord>;
  /** Memories of the given scopes (all scopes if omitted), unexpired unless asked, by importance then recency. */
  listMemories(options?: {
    readonly scopes?: readonly MemoryScope[];
    readonly includeExpired?: boolean;
    readonly now?: number;
  }): Promise<MemoryRecord[]>;
  /**
   * Writes `patch` over the stored memory and returns the row written. `check` vets that
   * row first (the stored one may be of another version's shape); one it throws for is not
   * written.
   */
  updateMemory(
    id: string,
    patch: Partial<Pick<MemoryRecord, 'content' | 'importance' | 'expiresAt' | 'key'>>,
    check?: (row: unknown) => MemoryRecord,
  ): Promise<MemoryRecord>;
  deleteMemory(id: string): Promise<void>;
  /** Deletes memories whose `expiresAt` is past; returns how many. */
  pruneExpired(now?: number): Promise<number>;

  /** Stores what confirm mode proposes, in one transaction; fails `not-found` if the conversation is gone. */
  saveProposals(proposals: readonly MemoryProposal[]): Promise<void>;
  /** The proposals of a conversation (or all), oldest first. Rows are returned as read: the caller checks them. */
  listProposals(options?: { readonly conversationId?: string }): Promise<MemoryProposal[]>;
  /**
   * Applies a proposal and deletes it, in one transaction: saves its memory (returned) or
   * deletes the memory it names (already gone is no fault). `check` vets the stored row
   * first; a proposal that is not stored fails `not-found`.
   */
  acceptProposal(
    id: string,
    check: (row: unknown) => MemoryProposal,
    now?: number,
  ): Promise<MemoryRecord | undefined>;
  /** Deletes a proposal without applying it; one that is not stored is no fault. */
  dismissProposal(id: string): Promise<void>;

  putRun(run: RunRecord): Promise<void>;
  /**
   * The key run rows are sealed with (see `RunSeal`): an HMAC-SHA-256 `CryptoKey` that cannot
   * be extracted, made by the first call and kept in a row of its own, so every agent worker
   * of the database seals and checks with the same one. A stored row that holds no such key
   * is replaced: rows sealed with the old one are then never resumed.
   */
  runSealKey(): Promise<CryptoKey>;
  getRun(id: string): Promise<RunRecord | undefined>;
  /** Runs of a conversation (or all), newest first, optionally of some statuses. */
  listRuns(options?: {
    readonly conversationId?: string;
    readonly statuses?: readonly RunRecord['status'][];
  }): Promise<RunRecord[]>;

  /** Newest first. */
  listAudit(options?: {
    readonly conversationId?: string;
    readonly runId?: string;
    readonly limit?: number;
  }): Promise<AuditRecord[]>;

  exportConversation(id: string): Promise<ConversationExport>;
  /**
   * Validates and imports an export (as parsed JSON or as text). Bad input is an
   * `invalid-input` error and changes nothing; an id already present is replaced only if
   * `replace`; a system message is accepted only with `allowSystemMessages`.
   */
  importConversation(data: unknown, options?: ImportOptions): Promise<ConversationRecord>;

  /**
   * Stores a document with its chunks, replacing any document of the same id and all its
   * chunks, in one transaction: a failure leaves the old document and chunks as they were.
   */
  putDocument(
    document: KnowledgeDocumentRecord,
    chunks: readonly KnowledgeChunkRecord[],
  ): Promise<void>;
  /** Deletes a document and its chunks; true if it existed. */
  deleteDocument(id: string): Promise<boolean>;
  /** Newest `addedAt` first. */
  listDocuments(): Promise<KnowledgeDocumentRecord[]>;
  /**
   * The stored blocks of knowledge vectors (`VectorBlockRecord`s, up to 1,000 vectors each),
   * loaded once to build the in-worker index: all of them, or at most `limit` by id from
   * the one after `after`. Rows are returned as read: the caller checks them
   * (`parseVectorBlock`).
   */
  listVectorBlocks(page?: {
    readonly after?: number | undefined;
    readonly limit?: number;
  }): Promise<unknown[]>;
  /**
   * The int8 copy of every stored block (`VectorCodesRecord`s, a quarter of the blocks'
   * bytes), which a new index searches with until it has read the blocks. Rows are returned
   * as read: the caller checks them (`parseVectorCodes`).
   */
  listVectorCodes(): Promise<unknown[]>;
  /**
   * The chunks' text with these keys, in the same order (`undefined` for one that is gone).
   * Rows are returned as read: the caller checks them.
   */
  getChunks(
    keys: readonly (readonly [docId: string, index: number])[],
  ): Promise<(KnowledgeChunkText | undefined)[]>;

  /**
   * Closes the store; later calls reject with `storage-failed`. Resolves once none of its
   * transactions is in flight, after which its worker may be ended without harm.
   */
  close(): Promise<void>;
}
