import type { RunUsage } from './budgets';
import type { ErrorData } from './errors';
import type {
  KnowledgeDocumentInput,
  KnowledgeDocumentRecord,
  KnowledgeHit,
  KnowledgeProgress,
} from './knowledge';
import type {
  AuditRecord,
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
} from './memory';

// The page's window on the agent's store: conversations, memories, runs, proposals and the
// knowledge base, as the agent worker serves them and the page's clients call them.

/** The methods of `MemoryApi`, for the services and clients that load their code on first call. */
export const MEMORY_METHODS = [
  'listConversations',
  'searchConversations',
  'getConversation',
  'renameConversation',
  'deleteConversation',
  'exportConversation',
  'importConversation',
  'dropRefused',
  'listMemories',
  'saveMemory',
  'updateMemory',
  'deleteMemory',
  'listRuns',
  'conversationUsage',
  'listProposals',
  'acceptProposal',
  'dismissProposal',
  'toolCalls',
] as const satisfies readonly (keyof MemoryApi)[];

/** The methods of `KnowledgeApi`, for the same. */
export const KNOWLEDGE_METHODS = [
  'add',
  'cancel',
  'remove',
  'list',
  'search',
] as const satisfies readonly (keyof KnowledgeApi)[];

/** The memory reads that return stored rows: each row is checked in the worker before it is sent. */
export const CHECKED_MEMORY_READS = [
  'listConversations',
  'searchConversations',
  'getConversation',
  'exportConversation',
  'listMemories',
  'listRuns',
  'conversationUsage',
  'listProposals',
  'toolCalls',
] as const satisfies readonly (keyof MemoryApi)[];

export type CheckedMemoryRead = (typeof CHECKED_MEMORY_READS)[number];

/**
 * A checked read as it crosses from the agent worker: what it found, without the rows that
 * do not have their table's shape, and a `storage-failed` error naming each of those.
 */
export interface CheckedRead<T> {
  readonly value: T;
  readonly leftOut: readonly ErrorData[];
}

/** `MemoryApi` as the agent worker serves it: the checked reads say what they left out. */
export type MemoryWire = {
  readonly [K in keyof MemoryApi]: K extends CheckedMemoryRead
    ? (...args: Parameters<MemoryApi[K]>) => Promise<CheckedRead<Awaited<ReturnType<MemoryApi[K]>>>>
    : MemoryApi[K];
};

/**
 * The agent's knowledge base, served from the agent worker. An import is named by an
 * `operationId` the page chooses, so the page can `cancel` it (a signal cannot cross).
 */
export interface KnowledgeApi {
  /** Chunks, embeds and stores a document, replacing one with the same id in one transaction. */
  add(
    document: KnowledgeDocumentInput,
    operationId: string,
    onProgress?: (progress: KnowledgeProgress) => void,
  ): Promise<KnowledgeDocumentRecord>;
  /** Aborts the import `operationId`; nothing of it is stored. */
  cancel(operationId: string): Promise<void>;
  /** Removes a document and its vectors; removing an unknown id is not an error. */
  remove(id: string): Promise<void>;
  /** Documents, newest first. */
  list(): Promise<KnowledgeDocumentRecord[]>;
  /** The `k` best chunks for `query` scoring at least the agent's `minScore`, best first. */
  search(query: string, k?: number): Promise<KnowledgeHit[]>;
}

/** A conversation with its messages, interrupted ones included. */
export interface ConversationDetail {
  readonly conversation: ConversationRecord;
  readonly messages: readonly MessageRecord[];
}

/** Reading and editing the agent's stored conversations, memories, runs and audit log. */
export interface MemoryApi {
  /**
   * The conversations, newest `updatedAt` first: all of them, or a page of at most `limit`
   * after the conversation `after` (the last one of the page before). A list of many
   * conversations is best read a page at a time: each page reads only its own rows.
   */
  listConversations(options?: ConversationListOptions): Promise<ConversationRecord[]>;
  /**
   * Finds conversations by what the user and the assistant wrote: those with a message in
   * which every word of `query` begins a word (case and accents aside, so a word typed so far
   * matches), newest first, each with that newest message's `seq` and a snippet of it. At
   * most `limit` (default 20, at most 100); a query without words finds none.
   */
  searchConversations(
    query: string,
    options?: { readonly limit?: number },
  ): Promise<ConversationSearchHit[]>;
  getConversation(id: string): Promise<ConversationDetail | undefined>;
  renameConversation(id: string, title: string): Promise<void>;
  deleteConversation(id: string): Promise<void>;
  /** The conversation as JSON text, to save as a file. */
  exportConversation(id: string): Promise<string>;
  /** Imports JSON text made by `exportConversation`; bad input is `invalid-input` and changes nothing. */
  importConversation(json: string, options?: ImportOptions): Promise<ConversationRecord>;
  /**
   * Removes the refused turn of run `runId` from the conversation, or every refused turn of
   * it when `runId` is left out: its messages are deleted (those after it move down, so `seq`
   * still runs from 1), attachments only it referred to are freed, and it is gone from
   * `getConversation`, the chat history and exports. Answers the ids of the runs whose turns
   * were removed; idempotent (a turn dropped already removes nothing). Fails, changing
   * nothing, with `turn-not-refused` for a run that is unknown, of another conversation or
   * not refused, `not-found` for a conversation that does not exist, and
   * `conversation-busy` while a run of the conversation is going on (in any tab).
   */
  dropRefused(conversationId: string, runId?: string): Promise<string[]>;
  listMemories(options?: {
    readonly scopes?: readonly MemoryScope[];
    readonly includeExpired?: boolean;
  }): Promise<MemoryRecord[]>;
  saveMemory(input: MemoryInput): Promise<MemoryRecord>;
  updateMemory(
    id: string,
    patch: Partial<Pick<MemoryRecord, 'content' | 'importance' | 'expiresAt' | 'key'>>,
  ): Promise<MemoryRecord>;
  deleteMemory(id: string): Promise<void>;
  listRuns(options?: {
    readonly conversationId?: string;
    readonly statuses?: readonly RunRecord['status'][];
  }): Promise<RunRecord[]>;
  /** What all runs of a conversation consumed (model calls, tool calls, tokens, cost), from their records. */
  conversationUsage(conversationId: string): Promise<RunUsage>;
  /**
   * What `memory.learn` holds in confirm mode, oldest first: all of it, or one
   * conversation's. A proposal stays until accepted, dismissed or its conversation deleted.
   */
  listProposals(options?: { readonly conversationId?: string }): Promise<MemoryProposal[]>;
  /**
   * Applies a proposal and deletes it, in one transaction: saves its memory (returned), or
   * deletes the memory it names (`undefined`; one already gone is no fault). A proposal that
   * is not stored (accepted or dismissed before, maybe in another tab) is `not-found`.
   */
  acceptProposal(id: string): Promise<MemoryRecord | undefined>;
  /** Deletes a proposal without applying it; one that is not stored is no fault. */
  dismissProposal(id: string): Promise<void>;
  /** The tool-call audit log, newest first. */
  toolCalls(options?: {
    readonly conversationId?: string;
    readonly runId?: string;
    readonly limit?: number;
  }): Promise<AuditRecord[]>;
}
