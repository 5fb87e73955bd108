import type { ChatMessage } from '../protocol/chat';
import type { ToolCallRecord } from '../protocol/tools';

/**
 * Where a memory applies: every conversation (`global`), one user's conversations
 * (`user:<id>`), or one conversation (`conversation:<id>`).
 */
export type MemoryScope = 'global' | `user:${string}` | `conversation:${string}`;

/** A conversation's row. */
export interface ConversationRecord {
  readonly id: string;
  readonly title: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The running summary of messages that fell out of the history window. */
  readonly summary: string;
  /** The last message `seq` the summary covers (0: none). */
  readonly summarizedThroughSeq: number;
  /** The `seq` of the newest message (0: none). */
  readonly lastSeq: number;
}

/** One message of a conversation, as stored. */
export interface MessageRecord {
  readonly conversationId: string;
  /** Position in the conversation, from 1, without gaps. */
  readonly seq: number;
  readonly runId: string;
  readonly message: ChatMessage;
  /**
   * `complete` messages are replayed to the model. `interrupted` marks the partial text of
   * a run cut short by a reload or a closed tab: shown, never replayed as an answer.
   */
  readonly status: 'complete' | 'interrupted';
  /** A rough token count (characters / 4), kept so windowing never re-measures history. */
  readonly approxTokens: number;
  readonly at: number;
}

/** A long-term memory. (`scope`, `key`) is unique. */
export interface MemoryRecord {
  readonly id: string;
  readonly key: string;
  readonly content: string;
  /** 0 to 1; higher first when memories are put in the instructions. */
  readonly importance: number;
  readonly scope: MemoryScope;
  /** Epoch ms after which the memory is ignored and pruned; absent: never. */
  readonly expiresAt?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** What saving a memory takes; `id`, timestamps are filled in. Same scope and key: replaced. */
export interface MemoryInput {
  readonly key: string;
  readonly content: string;
  readonly importance?: number;
  readonly scope?: MemoryScope;
  readonly expiresAt?: number;
}

/** A tool call of the audit log, with the conversation it belongs to. */
export interface AuditRecord extends ToolCallRecord {
  readonly conversationId: string;
}

/** A tool call held for approval, as a checkpoint keeps it. */
export interface PendingApproval {
  readonly callId: string;
  readonly toolName: string;
  readonly arguments: unknown;
}

/** A run's checkpoint: where it is, so a reload can tell interrupted from finished and resume approvals. */
export interface RunRecord {
  readonly id: string;
  readonly conversationId: string;
  readonly status: 'running' | 'awaiting-approval' | 'finished' | 'interrupted' | 'failed';
  readonly input: string;
  /** The step being streamed now (from 1). */
  readonly step: number;
  /** Text of the current step streamed so far, saved now and then; kept as `interrupted` if the run is cut. */
  readonly partialText: string;
  /**
   * A step whose tool calls wait for approval: the assistant message that made them and
   * the tool messages already settled, so the step can be finished after a reload.
   */
  readonly pendingStep?: {
    readonly assistant: Extract<ChatMessage, { role: 'assistant' }>;
    readonly settled: readonly Extract<ChatMessage, { role: 'tool' }>[];
    readonly awaiting: readonly PendingApproval[];
  };
  readonly startedAt: number;
  readonly updatedAt: number;
}

/** A conversation as exported: everything needed to import it elsewhere. */
export interface ConversationExport {
  readonly format: 'airlock.conversation';
  readonly version: 1;
  readonly conversation: ConversationRecord;
  readonly messages: readonly MessageRecord[];
  /** The conversation-scoped memories. */
  readonly memories: readonly MemoryRecord[];
}

/**
 * Everything Airlock keeps, behind one interface: the Dexie implementation is the only
 * module that knows IndexedDB. Every method is one transaction; none stays open across
 * a model or tool call. Failures reject with `AirlockError` (`storage-full`, `storage-failed`,
 * `invalid-input`, `not-found`).
 */
export interface ConversationStore {
  /** Creates the conversation if it does not exist; returns its row. */
  ensureConversation(id: string, title?: string): Promise<ConversationRecord>;
  getConversation(id: string): Promise<ConversationRecord | undefined>;
  /** Newest `updatedAt` first. */
  listConversations(): Promise<ConversationRecord[]>;
  renameConversation(id: string, title: string): Promise<void>;
  /** Deletes the conversation with its messages, runs, audit records and conversation-scoped memories. */
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
  }): Promise<MessageRecord[]>;
  /** The newest `limit` complete messages, oldest first; reads only those rows. */
  recentMessages(conversationId: string, limit: number): Promise<MessageRecord[]>;
  /** Complete messages with `fromSeq < seq <= toSeq`, oldest first. */
  messagesBetween(conversationId: string, fromSeq: number, toSeq: number): Promise<MessageRecord[]>;
  /** Every message, oldest first, interrupted ones included (for display and export). */
  listMessages(conversationId: string): Promise<MessageRecord[]>;
  updateSummary(conversationId: string, summary: string, throughSeq: number): Promise<void>;

  /** Inserts or replaces (same scope and key) a memory. */
  saveMemory(input: MemoryInput, now?: number): Promise<MemoryRecord>;
  /** Memories of the given scopes (all scopes if omitted), unexpired unless asked, by importance then recency. */
  listMemories(options?: { readonly scopes?: readonly MemoryScope[]; readonly includeExpired?: boolean; readonly now?: number }): Promise<MemoryRecord[]>;
  updateMemory(id: string, patch: Partial<Pick<MemoryRecord, 'content' | 'importance' | 'expiresAt' | 'key'>>): Promise<MemoryRecord>;
  deleteMemory(id: string): Promise<void>;
  /** Deletes memories whose `expiresAt` is past; returns how many. */
  pruneExpired(now?: number): Promise<number>;

  putRun(run: RunRecord): Promise<void>;
  getRun(id: string): Promise<RunRecord | undefined>;
  /** Runs of a conversation (or all), newest first, optionally of some statuses. */
  listRuns(options?: { readonly conversationId?: string; readonly statuses?: readonly RunRecord['status'][] }): Promise<RunRecord[]>;

  /** Newest first. */
  listAudit(options?: { readonly conversationId?: string; readonly runId?: string; readonly limit?: number }): Promise<AuditRecord[]>;

  exportConversation(id: string): Promise<ConversationExport>;
  /**
   * Validates and imports an export (as parsed JSON or as text). Bad input is an
   * `invalid-input` error and changes nothing; an id already present is replaced only if `replace`.
   */
  importConversation(data: unknown, options?: { readonly replace?: boolean }): Promise<ConversationRecord>;

  close(): void;
}
