import type { RunUsage } from './budgets';
import type { ChatMessage } from './chat';
import type { RunFlow } from './labels';
import type { ToolCallRecord } from './tools';

// What Airlock stores, as plain records: they cross from the agent worker to the page.

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

/**
 * A page of the conversation list: at most `limit` conversations (all when absent), from
 * the one after `after`, newest `updatedAt` first (conversations active at the same moment
 * by id, last first). Pass the last conversation of one page as the next page's `after`: a
 * conversation active since moves to the top rather than showing twice.
 */
export interface ConversationListOptions {
  readonly limit?: number | undefined;
  /**
   * The conversation the page starts after: its `id` and `updatedAt` as listed (undefined:
   * the first page, so `after: page.at(-1)` reads on from any page).
   */
  readonly after?: Pick<ConversationRecord, 'id' | 'updatedAt'> | undefined;
}

/** A conversation `searchConversations` found, with the newest of its messages that matched. */
export interface ConversationSearchHit {
  readonly conversation: ConversationRecord;
  /** The `seq` of its newest message in which every word of the query begins a word. */
  readonly seq: number;
  /** That message's text around the first word found (at most 160 characters, `…` where cut). */
  readonly snippet: string;
}

/** Where a stored message stands: see {@link MessageRecord.status}. */
export type MessageStatus = 'complete' | 'interrupted' | 'refused';

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
   * `refused` marks every message of a run whose model request the endpoint refused (HTTP
   * 400 or 413, `input-refused`): shown, never sent to the model again.
   */
  readonly status: MessageStatus;
  /** An estimated token count (see `estimateMessageTokens`), kept so windowing never re-measures history. */
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
  /** Where it came from, when Airlock learnt it; absent for memories saved by the app or the model's tools. */
  readonly source?: MemorySource;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * Where a learnt memory came from, in which run of which conversation: the rule that found
 * it, or the model extractor and the reason it gave.
 */
export type MemorySource =
  | {
      readonly via: 'rule';
      /** The `name` of the rule in `memory.learn.rules`. */
      readonly rule: string;
      readonly runId: string;
      readonly conversationId: string;
    }
  | {
      readonly via: 'model';
      /** Why the extractor learnt it, in its own words (data, never instructions). */
      readonly reason: string;
      readonly runId: string;
      readonly conversationId: string;
    };

/** What saving a memory takes; `id`, timestamps are filled in. Same scope and key: replaced. */
export interface MemoryInput {
  readonly key: string;
  readonly content: string;
  readonly importance?: number;
  readonly scope?: MemoryScope;
  readonly expiresAt?: number;
  readonly source?: MemorySource;
}

/**
 * What `memory.learn` in confirm mode holds for the app: a memory to save, or a learnt
 * memory to delete with the extractor's reason. Stored, so a reload does not lose it, until
 * the app accepts or dismisses it (`agent.memory.acceptProposal` / `dismissProposal`) or its
 * conversation is deleted.
 */
export type MemoryProposal = {
  readonly id: string;
  /** The conversation whose run learnt it. */
  readonly conversationId: string;
  readonly runId: string;
  readonly createdAt: number;
} & (
  | { readonly change: 'save'; readonly memory: MemoryInput }
  | { readonly change: 'delete'; readonly memory: MemoryRecord; readonly reason: string }
);

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
    /**
     * Calls that began executing; one without a settled message was cut short by the
     * reload and is never run again. Absent in checkpoints stored before it existed.
     */
    readonly started?: readonly string[];
  };
  /**
   * The tools the run was narrowed to (`allowedTools` of `run`), kept so a resume can
   * narrow them further but never widen them. Absent: the agent's tools.
   */
  readonly allowedTools?: readonly string[];
  /** What the run consumed so far; absent in runs stored before budgets existed. */
  readonly usage?: RunUsage;
  /**
   * What the run's side calls consumed: the history summary and the memory extractor
   * (`memory.learn.model`). Counted in the conversation's budgets and usage, not the run's.
   * Absent when the run made none.
   */
  readonly sideUsage?: RunUsage;
  /**
   * The run's labels (its input's, then what entered its context), kept so a resume goes
   * on with them. Absent in runs stored before labels existed, or with no label set.
   */
  readonly flow?: RunFlow;
  /**
   * Who asked for the run's one tool call instead of the model (`toolCall`): `webmcp`, an
   * agent on the page. Its answer goes to that caller's promise, which a reload takes away:
   * such a run is never resumed; one an agent finds left waiting (or running) as it starts is
   * settled as cancelled. Absent for the model's runs.
   */
  readonly caller?: 'webmcp';
  readonly startedAt: number;
  readonly updatedAt: number;
  /**
   * The agent worker's seal over every other field of the row (HMAC-SHA-256, keyed by the
   * database's run seal key, which the origin's code can use but never read): a resume goes
   * on only from a row whose seal holds, so what the run may do stays what its agent worker
   * recorded. Absent in runs stored before seals existed (or outside secure contexts).
   */
  readonly seal?: string;
}

/** An attachment's content, as a run's input hands it to the store. */
export interface AttachmentData {
  /** The SHA-256 of `bytes`, lowercase hex: the row's key. */
  readonly hash: string;
  readonly mediaType: string;
  readonly size: number;
  readonly bytes: ArrayBuffer;
}

/**
 * A stored attachment (`attachments`): its bytes once, however many messages refer to it,
 * and the conversations that do; it is deleted with the last of them.
 */
export interface AttachmentRecord extends AttachmentData {
  readonly conversationIds: readonly string[];
}

/** An attachment in an export: its bytes as base64, checked against `hash` on import. */
export interface ExportedAttachment {
  readonly hash: string;
  readonly mediaType: string;
  readonly size: number;
  readonly base64: string;
}

/** A conversation as exported: everything needed to import it elsewhere. */
export interface ConversationExport {
  readonly format: 'airlock.conversation';
  /** 2 when its messages carry content parts (attachments); 1 otherwise, as first shipped. */
  readonly version: 1 | 2;
  readonly conversation: ConversationRecord;
  readonly messages: readonly MessageRecord[];
  /** The conversation-scoped memories. */
  readonly memories: readonly MemoryRecord[];
  /** The attachments its messages refer to (version 2). */
  readonly attachments?: readonly ExportedAttachment[];
}

/** How `importConversation` treats the data it is given. */
export interface ImportOptions {
  /** Replace a conversation that has the same id (default false: refused with `invalid-input`). */
  readonly replace?: boolean;
  /**
   * Accept messages with role `system` (default false: refused with `invalid-input` naming
   * the message). Imported history is replayed to the model as it is, so a system message
   * in a file would speak to the model with the authority of the app's own instructions:
   * allow it only for files the app itself produced.
   */
  readonly allowSystemMessages?: boolean;
}

/** The tables a change notification can name. */
const STORE_TABLES = [
  'conversations',
  'messages',
  'memories',
  'runs',
  'audit',
  'proposals',
  'documents',
  'chunks',
  'attachments',
] as const;

/** A table a change notification can name. */
export type StoreTable = (typeof STORE_TABLES)[number];

/**
 * What the store posts after every successful write, so other tabs (and the page of
 * the same tab) can refresh what they show. Plain data: it crosses `BroadcastChannel`.
 */
export interface StoreChange {
  readonly table: StoreTable;
  /** The conversation the change belongs to, when it belongs to one. */
  readonly conversationId?: string;
}

/**
 * The changes a message on the store's channel carries (any same-origin script can post
 * there): one change, or a list of them, as a write with several posts them together. A
 * change names one of the store's tables, and a string conversation id if any. Undefined
 * for anything else, a list with one item that is not a change included.
 */
export function storeChangesIn(data: unknown): StoreChange[] | undefined {
  const changes: unknown[] = Array.isArray(data) ? data : [data];
  return changes.length > 0 && changes.every(isStoreChange) ? changes : undefined;
}

function isStoreChange(data: unknown): data is StoreChange {
  if (typeof data !== 'object' || data === null) return false;
  const { table, conversationId } = data as Record<string, unknown>;
  return (
    (STORE_TABLES as readonly unknown[]).includes(table) &&
    (conversationId === undefined || typeof conversationId === 'string')
  );
}

/** The IndexedDB database an agent uses when `memory.database` is not given. */
export const DEFAULT_DATABASE = 'airlock';

/** The name of the `BroadcastChannel` a store named `storeName` posts its changes on. */
export function storeChannelName(storeName: string): string {
  return `airlock:${storeName}`;
}

/**
 * A rule that learns a memory from what was said: where `pattern` matches, a memory with
 * `key` and `content` is proposed, `$1`, `$<name>` standing for the match's groups. Plain
 * data, so it crosses to the agent worker.
 */
export interface LearnRule {
  /** Names the rule in each memory's `source`. */
  readonly name: string;
  /** A regular expression (its source, as `new RegExp` takes it). */
  readonly pattern: string;
  /** Its flags (`g` is always added; `i`, `m`, `s`, `u` as wanted). */
  readonly flags?: string;
  /** The memory's key, e.g. `order:$1`; memories of one scope and key replace each other. */
  readonly key: string;
  /** The memory's content, e.g. `Order $1 is the user's current order.` */
  readonly content: string;
  /** What is searched: the user's input (default), the final answer, or both. */
  readonly from?: 'user' | 'assistant' | 'both';
  /** `conversation`, or `lasting` (the user's when `memory.userId` is set, else global; default). */
  readonly scope?: 'conversation' | 'lasting';
  /** The memory expires this long after it was learnt. */
  readonly expiresInMs?: number;
  /** 0 to 1 (default 0.5). */
  readonly importance?: number;
}

/** The model-based extractor of `memory.learn`: one structured-output call after each finished run. */
export interface LearnModelConfig {
  /** What to look for, added to the extractor's own instructions (app-written: trusted). */
  readonly instructions?: string;
  /** The most tokens the extractor's answer may take (sent as `max_completion_tokens`). */
  readonly maxTokens: number;
}

/** How an agent learns memories after each finished run. */
export interface LearnConfig {
  readonly rules: readonly LearnRule[];
  /** The model-based extractor; absent: rules only. */
  readonly model?: LearnModelConfig;
  /**
   * Hold what is learnt for the app to confirm: it is stored as proposals, announced by
   * `memory-learned` events (status `proposed`, or `proposed-delete` from the model
   * extractor, with their `proposalId`), which the app accepts or dismisses through the
   * memory API. Default false: applied at once (status `saved`, `deleted`).
   */
  readonly confirm: boolean;
}
