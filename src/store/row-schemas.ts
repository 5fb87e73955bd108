import { z } from 'zod/mini';
import { describeIssues, safeParse } from '../errors/schema-issues';
import { INPUT_LIMITS } from '../protocol/request-limits';
import { SHA256_HEX } from './attachment-bytes';
import { conversationOfScope, isMemoryScope } from './memory-rules';
import type {
  AuditRecord,
  ConversationRecord,
  MemoryProposal,
  MemoryRecord,
  MemoryScope,
  MessageRecord,
  RunRecord,
} from './store';

// Rows as read back from IndexedDB, where another version of the app, another tab or any
// same-origin script may have written anything. A run checks every row it builds on.

const timestamp = z.number();
const seqNumber = z.int().check(z.nonnegative());
const count = z.number().check(z.nonnegative());

/** A tool call as stored (the Chat Completions shape). */
export const toolCallSchema = z.object({
  id: z.string().check(z.minLength(1)),
  type: z.literal('function'),
  function: z.object({ name: z.string().check(z.minLength(1)), arguments: z.string() }),
});

/** A Responses API reasoning item as stored with its assistant message and sent back. */
export const reasoningItemSchema = z.object({
  id: z.string().check(z.minLength(1)),
  summary: z.array(z.string()),
  encryptedContent: z.string().check(z.minLength(1)),
});

/** The most parts one user message may have. */
export const MAX_CONTENT_PARTS = INPUT_LIMITS.maxContentParts;

/** A reference to a stored attachment, as a message holds it. */
export const attachmentRefSchema = z.object({
  hash: z.string().check(z.regex(SHA256_HEX, 'must be a SHA-256 in lowercase hex')),
  mediaType: z.string().check(z.minLength(1), z.maxLength(100)),
  size: z.int().check(z.nonnegative()),
});

const imageDetail = z.exactOptional(z.enum(['auto', 'low', 'high']));

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
    url: z.string().check(
      z.maxLength(INPUT_LIMITS.maxImageUrlChars),
      z.refine((url) => url.startsWith('https://'), 'must be an https: URL'),
    ),
    detail: imageDetail,
  }),
  z.object({
    type: z.literal('file'),
    attachment: attachmentRefSchema,
    filename: z.string().check(z.minLength(1), z.maxLength(INPUT_LIMITS.maxFilenameChars)),
  }),
]);

/** A chat message as stored and replayed. */
export const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({
    role: z.literal('user'),
    content: z.union([
      z.string(),
      z.array(storedPartSchema).check(z.minLength(1), z.maxLength(MAX_CONTENT_PARTS)),
    ]),
  }),
  z.object({
    role: z.literal('assistant'),
    content: z.nullable(z.string()),
    tool_calls: z.exactOptional(z.array(toolCallSchema)),
    reasoning: z.exactOptional(z.string()),
    reasoningItems: z.exactOptional(z.array(reasoningItemSchema)),
  }),
  z.object({
    role: z.literal('tool'),
    tool_call_id: z.string().check(z.minLength(1)),
    content: z.string(),
  }),
]);

/** A stored message row (`messages`). */
export const messageRowSchema = z.object({
  conversationId: z.string(),
  seq: z.int().check(z.positive()),
  runId: z.string(),
  message: chatMessageSchema,
  status: z.enum(['complete', 'interrupted', 'refused']),
  approxTokens: count,
  at: timestamp,
});

/** A conversation's fields (an export checks their consistency with its messages itself). */
export const conversationFieldsSchema = z.object({
  id: z.string().check(z.minLength(1)),
  title: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
  summary: z.string(),
  summarizedThroughSeq: seqNumber,
  lastSeq: seqNumber,
});

/** A stored conversation row (`conversations`): its summary and seq counters feed the context. */
export const conversationRowSchema = conversationFieldsSchema.check(
  z.refine((row) => row.summarizedThroughSeq <= row.lastSeq, {
    error: 'summarizedThroughSeq is beyond lastSeq',
    path: ['summarizedThroughSeq'],
  }),
);

// zod/mini's refine does not narrow the type as the classic `.refine(isMemoryScope)` did.
const memoryScope = z
  .string()
  .check(
    z.refine(isMemoryScope, 'expected "global", "user:<id>" or "conversation:<id>"'),
  ) as z.ZodMiniType<MemoryScope, string>;

/** Where a learnt memory came from. */
const memorySourceSchema = z.discriminatedUnion('via', [
  z.object({
    via: z.literal('rule'),
    rule: z.string().check(z.minLength(1)),
    runId: z.string().check(z.minLength(1)),
    conversationId: z.string().check(z.minLength(1)),
  }),
  z.object({
    via: z.literal('model'),
    reason: z.string().check(z.minLength(1)),
    runId: z.string().check(z.minLength(1)),
    conversationId: z.string().check(z.minLength(1)),
  }),
]);

/** A stored long-term memory row (`memories`). */
export const memoryRowSchema = z.object({
  id: z.string().check(z.minLength(1)),
  key: z.string().check(z.minLength(1)),
  content: z.string(),
  importance: z.number().check(z.gte(0), z.lte(1)),
  scope: memoryScope,
  expiresAt: z.exactOptional(timestamp),
  source: z.exactOptional(memorySourceSchema),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** A memory to save, as a proposal holds it (its store fills in the rest). */
const memoryInputSchema = z.partial(
  z.omit(memoryRowSchema, { id: true, createdAt: true, updatedAt: true }),
  { importance: true, scope: true },
);

const proposalFields = {
  id: z.string().check(z.minLength(1)),
  conversationId: z.string().check(z.minLength(1)),
  runId: z.string().check(z.minLength(1)),
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
  .check(
    z.refine(
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
    ),
  );

const runUsageSchema = z.object({
  modelCalls: count,
  toolCalls: count,
  promptTokens: count,
  completionTokens: count,
  totalTokens: count,
  cost: z.exactOptional(count),
  estimated: z.exactOptional(z.boolean()),
});

/** The longest seal a run row may carry (one of today's is 67 characters). */
const MAX_SEAL_CHARS = 200;

/**
 * A stored run row (`runs`). Its checkpoint (`pendingStep`) is checked where a resume
 * reads it (`readPendingStep`); here it only has to be an object when present.
 */
export const runRowSchema = z.object({
  id: z.string().check(z.minLength(1)),
  conversationId: z.string().check(z.minLength(1)),
  status: z.enum(['running', 'awaiting-approval', 'finished', 'interrupted', 'failed']),
  input: z.string(),
  step: z.int().check(z.positive()),
  partialText: z.string(),
  pendingStep: z.exactOptional(z.looseObject({})),
  allowedTools: z.exactOptional(z.array(z.string())),
  usage: z.exactOptional(runUsageSchema),
  sideUsage: z.exactOptional(runUsageSchema),
  // Checked where a run with a flow policy reads it (`RunFlowTracker`).
  flow: z.exactOptional(z.looseObject({})),
  caller: z.exactOptional(z.literal('webmcp')),
  startedAt: timestamp,
  updatedAt: timestamp,
  // Whether it holds is checked where a resume reads the row (`RunSeal.check`).
  seal: z.exactOptional(z.string().check(z.maxLength(MAX_SEAL_CHARS))),
});

/**
 * A stored tool-call audit row (`audit`). Its outcome is any code: one that a newer version
 * added is still a settled call to list.
 */
export const auditRowSchema = z.object({
  conversationId: z.string().check(z.minLength(1)),
  runId: z.string().check(z.minLength(1)),
  callId: z.string().check(z.minLength(1)),
  toolName: z.string(),
  arguments: z.unknown(),
  outcome: z.string().check(z.minLength(1)),
  durationMs: count,
  at: timestamp,
  // Shown as stored, never acted on.
  flow: z.exactOptional(z.looseObject({})),
  quarantine: z.exactOptional(
    z.object({
      usage: z.object({
        promptTokens: count,
        completionTokens: count,
        totalTokens: count,
        estimated: z.exactOptional(z.boolean()),
      }),
      cost: z.exactOptional(count),
      durationMs: count,
    }),
  ),
  caller: z.exactOptional(z.literal('webmcp')),
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
export const ROW_SCHEMAS: { readonly [Table in keyof RowTypes]: z.ZodMiniType } = {
  messages: messageRowSchema,
  conversations: conversationRowSchema,
  memories: memoryRowSchema,
  runs: runRowSchema,
  audit: auditRowSchema,
  proposals: proposalRowSchema,
};

/** What is wrong with a row of `table` (empty: nothing), as `path: message` lines. */
export function rowProblems(table: keyof RowTypes, row: unknown): string[] {
  const parsed = safeParse(ROW_SCHEMAS[table], row);
  if (parsed.success) return [];
  return describeIssues(parsed.error);
}
