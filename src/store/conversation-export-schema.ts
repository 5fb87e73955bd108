import { z } from 'zod/mini';
import { AirlockError } from '../errors/airlock-error';
import { safeParse } from '../errors/schema-issues';
import { base64Chars, SHA256_HEX } from './attachment-bytes';
import { MAX_IMPORT_ATTACHMENT_BYTES } from './conversation-attachments';
import { conversationFieldsSchema, memoryRowSchema, messageRowSchema } from './row-schemas';
import type { ConversationExport, ImportOptions } from './store';

/** The most text an import may be: parsing more would stall the tab for little gain. */
export const MAX_IMPORT_CHARS = 20 * 1024 * 1024;

/** The longest an import given as text may be: its text and its attachments' base64. */
export const MAX_IMPORT_FILE_CHARS = MAX_IMPORT_CHARS + base64Chars(MAX_IMPORT_ATTACHMENT_BYTES);

/** The largest one attachment of an import may be, in bytes. */
export const MAX_IMPORT_ONE_ATTACHMENT_BYTES = 20 * 1024 * 1024;

/** The most messages an import may hold. */
export const MAX_IMPORT_MESSAGES = 100_000;

/** How many problems an error message lists; all of them are in `details.problems`. */
const MAX_LISTED_PROBLEMS = 10;

/**
 * An exported conversation, as it must look to be imported. Unknown keys are dropped, so
 * nothing the file carries beyond the format reaches the database.
 */
export const conversationExportSchema = z.object({
  format: z.literal('airlock.conversation'),
  version: z.union([z.literal(1), z.literal(2)]),
  conversation: conversationFieldsSchema,
  messages: z.array(messageRowSchema).check(z.maxLength(MAX_IMPORT_MESSAGES)),
  memories: z.array(memoryRowSchema),
  attachments: z.exactOptional(
    z.array(
      z.object({
        hash: z.string().check(z.regex(SHA256_HEX, 'must be a SHA-256 in lowercase hex')),
        mediaType: z.string().check(z.minLength(1), z.maxLength(100)),
        size: z.int().check(z.nonnegative(), z.lte(MAX_IMPORT_ONE_ATTACHMENT_BYTES)),
        base64: z.string().check(z.maxLength(base64Chars(MAX_IMPORT_ONE_ATTACHMENT_BYTES))),
      }),
    ),
  ),
});

function rejectImport(message: string, problems: readonly string[] = []): AirlockError {
  return new AirlockError('invalid-input', message, { details: { problems } });
}

function listProblems(problems: readonly string[]): string {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS).join('; ');
  const more = problems.length - MAX_LISTED_PROBLEMS;
  return more > 0 ? `${listed}; and ${more} more` : listed;
}

/** `messages.3.message.role`, or `(root)`. */
function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

function messageCount(data: unknown): number {
  if (typeof data !== 'object' || data === null) return 0;
  const { messages } = data as { messages?: unknown };
  return Array.isArray(messages) ? messages.length : 0;
}

/** The characters of text an export holds, for the size cap of imports given as objects. */
function textSize(value: ConversationExport): number {
  let chars = value.conversation.title.length + value.conversation.summary.length;
  for (const record of value.messages) {
    const { content } = record.message;
    if (typeof content === 'string') chars += content.length;
    else if (content !== null)
      for (const part of content) chars += part.type === 'text' ? part.text.length : 0;
    if (record.message.role === 'assistant') {
      for (const call of record.message.tool_calls ?? [])
        chars += call.function.name.length + call.function.arguments.length;
    }
  }
  for (const memory of value.memories) chars += memory.key.length + memory.content.length;
  return chars;
}

/**
 * What the types cannot say: messages numbered 1..n in this conversation, a `lastSeq` that
 * matches, tool results answering an earlier call, memories of this conversation only
 * (an import must not plant memories that other conversations would read).
 */
export function findInconsistencies(value: ConversationExport): string[] {
  const problems: string[] = [];
  const { id, lastSeq, summarizedThroughSeq } = value.conversation;
  const callIds = new Set<string>();
  value.messages.forEach((record, index) => {
    if (record.seq !== index + 1)
      problems.push(
        `messages.${index}.seq: is ${record.seq}, expected ${index + 1} (seq must run from 1 without gaps)`,
      );
    if (record.conversationId !== id)
      problems.push(
        `messages.${index}.conversationId: is "${record.conversationId}", expected "${id}"`,
      );
    const { message } = record;
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) callIds.add(call.id);
    } else if (message.role === 'tool' && !callIds.has(message.tool_call_id)) {
      problems.push(
        `messages.${index}.message.tool_call_id: "${message.tool_call_id}" answers no tool call of an earlier assistant message`,
      );
    }
  });
  if (lastSeq !== value.messages.length)
    problems.push(
      `conversation.lastSeq: is ${lastSeq}, expected ${value.messages.length} (the last seq)`,
    );
  if (summarizedThroughSeq > lastSeq)
    problems.push(
      `conversation.summarizedThroughSeq: is ${summarizedThroughSeq}, beyond lastSeq ${lastSeq}`,
    );
  const memoryIds = new Set<string>();
  const memoryKeys = new Set<string>();
  value.memories.forEach((memory, index) => {
    if (memory.scope !== `conversation:${id}`)
      problems.push(`memories.${index}.scope: is "${memory.scope}", expected "conversation:${id}"`);
    if (memoryIds.has(memory.id))
      problems.push(`memories.${index}.id: "${memory.id}" appears twice`);
    if (memoryKeys.has(memory.key))
      problems.push(`memories.${index}.key: "${memory.key}" appears twice`);
    memoryIds.add(memory.id);
    memoryKeys.add(memory.key);
  });
  return problems;
}

/**
 * Messages with role `system`: replayed, they would speak with the authority of the app's
 * instructions, so an import carries them only when the caller allows it.
 */
function findSystemMessages(value: ConversationExport): string[] {
  const problems: string[] = [];
  value.messages.forEach((record, index) => {
    if (record.message.role === 'system')
      problems.push(
        `messages.${index}.message.role: is "system"; system messages are imported only with \`allowSystemMessages: true\``,
      );
  });
  return problems;
}

/**
 * Validates data to import: an exported conversation as an object or as JSON text. Text
 * is measured before it is parsed. Rejects with `invalid-input` saying what is wrong
 * (the JSON error, the paths of wrong fields, a system message not allowed, the broken
 * numbering) and changes nothing.
 */
export function parseConversationExport(
  data: unknown,
  options: Pick<ImportOptions, 'allowSystemMessages'> = {},
): ConversationExport {
  let candidate = data;
  if (typeof data === 'string') {
    if (data.length > MAX_IMPORT_FILE_CHARS)
      throw rejectImport(
        `The import is too large: ${data.length} characters of text, more than the ${MAX_IMPORT_FILE_CHARS} allowed.`,
      );
    try {
      candidate = JSON.parse(data);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw rejectImport(`The import is not valid JSON: ${reason}`);
    }
  }
  const count = messageCount(candidate);
  if (count > MAX_IMPORT_MESSAGES)
    throw rejectImport(
      `The import is too large: ${count} messages, more than the ${MAX_IMPORT_MESSAGES} allowed.`,
    );
  const parsed = safeParse(conversationExportSchema, candidate);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${formatPath(issue.path)}: ${issue.message}`,
    );
    throw rejectImport(
      `The import is not an Airlock conversation: ${listProblems(problems)}`,
      problems,
    );
  }
  const value: ConversationExport = parsed.data;
  const size = textSize(value);
  if (size > MAX_IMPORT_CHARS)
    throw rejectImport(
      `The import is too large: ${size} characters of text, more than the ${MAX_IMPORT_CHARS} allowed.`,
    );
  const problems = [
    ...(options.allowSystemMessages === true ? [] : findSystemMessages(value)),
    ...findInconsistencies(value),
  ];
  if (problems.length > 0)
    throw rejectImport(`The import is inconsistent: ${listProblems(problems)}`, problems);
  return value;
}
