import { z } from 'zod';
import { describeIssues } from '../errors/schema-issues';
import { INPUT_LIMITS } from '../protocol/request-limits';
import { SHA256_HEX } from './attachment-bytes';
import { conversationOfScope, isMemoryScope } from './memory-rules';
import type {
  AuditRecord,
  ConversationRecord,
  MemoryProposal,
  MemoryRecord,
  MessageRecord,
  RunRecord,
} from './store';

// Rows as read back from IndexedDB, where another version of the app, another tab or any
// same-origin script may have written anything. A run checks every row it builds on.

const timestamp = z.number().finite();
const seqNumber = z.int().nonnegative();
const count = z.number().finite().nonnegative();

/** A tool call as stored (the Chat Completions shape). */
export const toolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

/** A Responses API reasoning item as stored with its assistant message and sent back. */
export const reasoningItemSchema = z.object({
  id: z.string().min(1),
  summary: z.array(z.string()),
  encryptedContent: z.string().min(1),
});

/** The most parts one user message may have. */
export const MAX_CONTENT_PARTS = INPUT_LIMITS.maxContentParts;

/** A reference to a stored attachment, as a message holds it. */
export const attachmentRefSchema = z.object({
  hash: z.string().regex(SHA256_HEX, 'must be a SHA-256 in lowercase hex'),
  mediaType: z.string().min(1).max(100),
  size: z.int().nonnegative(),
});

const imageDetail = z.enum(['auto', 'low', 'high']).exactOptional();

/**
 * A user message's part as stored: text, an image by reference or by `https:` URL, a file
 * by reference. Bytes are never stored in a message (the resolved forms with data URLs
 * exist only in a request being sent), so a row cannot smuggle in an unbounded data URL.
 */
export const storedPartSchema = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), attachment: attachmentRefSchema, detail: imageDetail }),
  z.object({
    type: z.literal('image'),
    url: z
      .string()
      .max(INPUT_LIMITS.maxImageUrlChars)
      .refine((url) => url.startsWith('https://'), 'must be an https: URL'),
    detail: imageDetail,
  }),
  z.object({
    type: z.literal('file'),
    attachment: attachmentRefSchema,
    filename: z.string().min(1).max(INPUT_LIMITS.maxFilenameChars),
  }),
]);

/** A chat message as stored and replayed. */
export const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(storedPartSchema).min(1).max(MAX_CONTENT_PARTS)]),
  }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    tool_calls: z.array(toolCallSchema).exactOptional(),
    reasoning: z.string().exactOptional(),
    reasoningItems: z.array(reasoningItemSchema).exactOptional(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: z.string() }),
]);

/** A stored message row (`messages`). */
export const messageRowSchema = z.object({
  conversationId: z.string(),
  seq: z.int().positive(),
  runId: z.string(),
  message: chatMessageSchema,
  status: z.enum(['complete', 'interrupted', 'refused']),
  approxTokens: count,
  at: timestamp,
});

/** A conversation's fields (an export checks their consistency with its messages itself). */
export const conversationFieldsSchema = z.object({
  id: z.string().min(1),
  title: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
  summary: z.string(),
  summarizedThroughSeq: seqNumber,
  lastSeq: seqNumber,
});

/** A stored conversation row (`conversations`): its summary and seq counters feed the context. */
export const conversationRowSchema = conversationFieldsSchema.refine(
  (row) => row.summarizedThroughSeq <= row.lastSeq,
  {
    error: 'summarizedThroughSeq is beyond lastSeq',
    path: ['summarizedThroughSeq'],
  },
);

const memoryScope = z
  .string()
  .refine(isMemoryScope, 'expected "global", "user:<id>" or "conversation:<id>"');

/** Where a learnt memory came from. */
const memorySourceSchema = z.discriminatedUnion('via', [
  z.object({
    via: z.literal('rule'),
    rule: z.string().min(1),
    runId: z.string().min(1),
    conversationId: z.string().min(1),
  }),
  z.object({
    via: z.literal('model'),
    reason: z.string().min(1),
    runId: z.string().min(1),
    conversationId: z.string().min(1),
  }),
]);

/** A stored long-term memory row (`memories`). */
export const memoryRowSchema = z.object({
  id: z.string().min(1),
  key: z.string().min(1),
  content: z.string(),
  importance: z.number().min(0).max(1),
  scope: memoryScope,
  expiresAt: timestamp.exactOptional(),
  source: memorySourceSchema.exactOptional(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** A memory to save, as a proposal holds it (its store fills in the rest). */
const memoryInputSchema = memoryRowSchema
  .omit({ id: true, createdAt: true, updatedAt: true })
  .partial({ importance: true, scope: true });

const proposalFields = {
  id: z.string().min(1),
  conversationId: z.string().min(1),
  runId: z.string().min(1),
  createdAt: timestamp,
};

/**
 * A stored memory proposal row (`proposals`): a memory to save, or one to delete. Checked for
 * what it means too, as `memory.learn` makes them: a memory of the proposal's conversation or
 * a lasting one (never another conversation's); a save learnt by the proposal's own run; a
 * delete of a learnt memory (the app's and the tools' memories are not learning's to delete).
 * What a delete shows is checked against the stored memory when it is accepted.
 */
export const proposalRowSchema = z
  .discriminatedUnion('change', [
    z.object({ ...proposalFields, change: z.literal('save'), memory: memoryInputSchema }),
    z.object({
      ...proposalFields,
      change: z.literal('delete'),
      memory: memoryRowSchema,
      reason: z.string(),
    }),
  ])
  .refine(
    ({ conversationId, runId, change, memory: { scope, source } }) => {
      const owner = conversationOfScope(scope);
      return (
        (owner === undefined || owner === conversationId) &&
        source !== undefined &&
        (change === 'delete' ||
          (source.runId === runId && source.conversationId === conversationId))
      );
    },
    {
      error:
        "must be a learnt memory of the proposal's conversation or a lasting scope (to save: learnt by the proposal's run)",
      path: ['memory'],
    },
  );

const runUsageSchema = z.object({
  modelCalls: count,
  toolCalls: count,
  promptTokens: count,
  completionTokens: count,
  totalTokens: count,
  cost: count.exactOptional(),
  estimated: z.boolean().exactOptional(),
});

/** The longest seal a run row may carry (one of today's is 67 characters). */
const MAX_SEAL_CHARS = 200;

/**
 * A stored run row (`runs`). Its checkpoint (`pendingStep`) is checked where a resume
 * reads it (`readPendingStep`); here it only has to be an object when present.
 */
export const runRowSchema = z.object({
  id: z.string().min(1),
  conversationId: z.string().min(1),
  status: z.enum(['running', 'awaiting-approval', 'finished', 'interrupted', 'failed']),
  input: z.string(),
  step: z.int().positive(),
  partialText: z.string(),
  pendingStep: z.object({}).loose().exactOptional(),
  allowedTools: z.array(z.string()).exactOptional(),
  usage: runUsageSchema.exactOptional(),
  sideUsage: runUsageSchema.exactOptional(),
  // Checked where a run with a flow policy reads it (`RunFlowTracker`).
  flow: z.object({}).loose().exactOptional(),
  startedAt: timestamp,
  updatedAt: timestamp,
  // Whether it holds is checked where a resume reads the row (`RunSeal.check`).
  seal: z.string().max(MAX_SEAL_CHARS).exactOptional(),
});

/**
 * A stored tool-call audit row (`audit`). Its outcome is any code: one that a newer version
 * added is still a settled call to list.
 */
export const auditRowSchema = z.object({
  conversationId: z.string().min(1),
  runId: z.string().min(1),
  callId: z.string().min(1),
  toolName: z.string(),
  arguments: z.unknown(),
  outcome: z.string().min(1),
  durationMs: count,
  at: timestamp,
  // Shown as stored, never acted on.
  flow: z.object({}).loose().exactOptional(),
  caller: z.literal('webmcp').exactOptional(),
});

/** The record types of the tables whose rows are checked when read, by table name. */
export interface RowTypes {
  readonly messages: MessageRecord;
  readonly conversations: ConversationRecord;
  readonly memories: MemoryRecord;
  readonly runs: RunRecord;
  readonly audit: AuditRecord;
  readonly proposals: MemoryProposal;
}

/** The schema of each table's rows. */
export const ROW_SCHEMAS: { readonly [Table in keyof RowTypes]: z.ZodType } = {
  messages: messageRowSchema,
  conversations: conversationRowSchema,
  memories: memoryRowSchema,
  runs: runRowSchema,
  audit: auditRowSchema,
  proposals: proposalRowSchema,
};

/** What is wrong with a row of `table` (empty: nothing), as `path: message` lines. */
export function rowProblems(table: keyof RowTypes, row: unknown): string[] {
  const parsed = ROW_SCHEMAS[table].safeParse(row);
  if (parsed.success) return [];
  return describeIssues(parsed.error);
}
