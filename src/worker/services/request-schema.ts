import { z } from 'zod';
import { AirlockError } from '../../errors/airlock-error';
import {
  checkField,
  type FieldErrorCode,
  MAX_ID_CHARS,
  TOOL_NAME,
} from '../../errors/field-checks';
import { inputTooLarge } from '../../errors/input-errors';
import { modelOptionsCheck } from '../../model/model-options';
import type { KnowledgeProgress } from '../../protocol/knowledge';
import { MAX_LEVEL_CHARS } from '../../protocol/labels';
import type { MemoryScope } from '../../protocol/memory';
import type { ModelOptions } from '../../protocol/model-options';
import { INPUT_LIMITS } from '../../protocol/request-limits';
import type { ResumeRequest, RetryRequest, RunRequest } from '../../protocol/wire';
import { isMemoryScope } from '../../store/memory-rules';
import { MAX_CONTENT_PARTS } from '../../store/row-schemas';
import { toolSpecsSchema } from '../tools/tool-spec-schema';

// What the page sends the agent worker with each run and each memory or knowledge call,
// parsed before use: a page (or anything that wraps the worker) is not trusted.

const nonBlank = z.string().refine((value) => value.trim() !== '', 'must not be blank');
export const id = nonBlank.pipe(z.string().max(MAX_ID_CHARS));
const toolNames = z.array(z.string().regex(TOOL_NAME));

/** The longest output JSON Schema a run may carry, in characters of its JSON. */
export const MAX_OUTPUT_SCHEMA_CHARS = 100_000;

/** A run's structured output: a JSON Schema of an object, small enough to send with each call. */
const outputRequest = z.object({
  jsonSchema: z
    .record(z.string(), z.unknown())
    .refine((schema) => schema.type === 'object', 'must be the JSON Schema of an object')
    .refine(
      (schema) => (jsonLength(schema) ?? Number.POSITIVE_INFINITY) <= MAX_OUTPUT_SCHEMA_CHARS,
      `must be JSON of at most ${MAX_OUTPUT_SCHEMA_CHARS} characters`,
    ),
});

/** The longest instructions a run may bring, in characters. */
export const MAX_RUN_INSTRUCTIONS_CHARS = 100_000;

/** What a run or a resume may change about its model calls; `modelOptions` is checked after. */
const runOverrides = {
  model: id.exactOptional(),
  modelOptions: z.record(z.string(), z.unknown()).exactOptional(),
  instructions: z.string().max(MAX_RUN_INSTRUCTIONS_CHARS).exactOptional(),
  tools: toolSpecsSchema.exactOptional(),
};

const imageDetail = z.enum(['auto', 'low', 'high']).exactOptional();
const blob = z.custom<Blob>((value) => value instanceof Blob, 'must be a Blob');
const mediaType = z.string().max(100).exactOptional();
const level = z.string().regex(/\S/).max(MAX_LEVEL_CHARS).exactOptional();
/** An attachment's label: a level only (its content is never trusted), so `integrity` is refused. */
const attachmentLabel = z.strictObject({ confidentiality: level }).exactOptional();

/** One part of a run's input; its bytes are read and checked by `readRunInput`. */
const inputPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({
    type: z.literal('image'),
    image: z.union([blob, z.string()]),
    mediaType,
    detail: imageDetail,
    label: attachmentLabel,
  }),
  z.object({
    type: z.literal('file'),
    data: z.union([blob, z.string()]),
    mediaType,
    filename: z.string().max(INPUT_LIMITS.maxFilenameChars).exactOptional(),
    label: attachmentLabel,
  }),
]);

/** A run's input: text, or parts. */
export const runInput = z.union([
  nonBlank,
  z
    .array(inputPart)
    .min(1)
    .max(MAX_CONTENT_PARTS)
    .refine(
      (parts) => parts.some((part) => part.type !== 'text' || part.text.trim() !== ''),
      'must have a part that is not blank',
    ),
]);

/** A run request's fields; a retry's (`refused-retry.ts`) are these with `retryOf`. */
export const runRequestSchema = z.object({
  runId: id,
  input: runInput,
  conversationId: id,
  allowedTools: toolNames.exactOptional(),
  output: outputRequest.exactOptional(),
  labels: z.object({ confidentiality: level }).exactOptional(),
  toolCall: z
    .strictObject({
      caller: z.literal('webmcp'),
      name: z.string().regex(TOOL_NAME),
      arguments: z.unknown(),
    })
    .exactOptional(),
  ...runOverrides,
});

const resumeRequestSchema = z.object({
  runId: id,
  allowedTools: toolNames.exactOptional(),
  output: outputRequest.exactOptional(),
  ...runOverrides,
});

/** The length of `value` as JSON, or undefined when it has none (a cycle, a BigInt). */
function jsonLength(value: unknown): number | undefined {
  try {
    return JSON.stringify(value)?.length;
  } catch {
    return undefined;
  }
}

/**
 * Parses a run request. A bad input is `invalid-input`, an input over `maxInputChars` is
 * `input-too-large` (checked before anything is stored or sent), anything else is
 * `invalid-options`.
 */
export function parseRunRequest<T extends RunRequest | RetryRequest = RunRequest>(
  value: unknown,
  maxInputChars: number,
  schema: z.ZodType = runRequestSchema,
): T {
  const input = (value as { input?: unknown } | null)?.input;
  // Measured before parsing, so a 12 MB input is refused as too large, not walked by a schema.
  if (typeof input === 'string' && input.length > maxInputChars)
    throw inputTooLarge(input.length, maxInputChars);
  const parsed = parseArgument(schema, value, 'request', 'invalid-options', {
    root: true,
    inputFields: ['input', 'retryOf'],
  }) as { readonly modelOptions?: Record<string, unknown> };
  // Parsed by its schema, which types it.
  return withCheckedOptions(parsed) as unknown as T;
}

/** Parses a resume request; anything wrong is `invalid-options`. */
export function parseResumeRequest(value: unknown): ResumeRequest {
  return withCheckedOptions(
    parseArgument(resumeRequestSchema, value, 'request', 'invalid-options', { root: true }),
  );
}

/** A parsed request whose model options are checked too (by the page's own rules). */
function withCheckedOptions<T extends { readonly modelOptions?: Record<string, unknown> }>(
  request: T,
): T & { readonly modelOptions?: ModelOptions } {
  if (request.modelOptions !== undefined)
    checkField(request.modelOptions, 'modelOptions', modelOptionsCheck);
  return request as T & { readonly modelOptions?: ModelOptions };
}

/** The run id a request claims, for the `run-error` that refuses it. */
export function claimedRunId(value: unknown): string {
  const runId = (value as { runId?: unknown } | null)?.runId;
  return typeof runId === 'string' ? runId : '';
}

/** The most chunks one page search returns. */
export const MAX_SEARCH_K = 100;

/**
 * The longest document `knowledge.add` takes, in characters (about a 5 MB text file): it
 * is held whole in the worker while it is chunked and embedded, so it is bounded.
 */
export const MAX_DOCUMENT_CHARS = 5_000_000;

/** The longest title (a conversation's or a document's) and search query, in characters. */
export const MAX_TITLE_CHARS = 200;
export const MAX_QUERY_CHARS = 10_000;

/** The most conversations one `searchConversations` call returns, and how many by default. */
export const MAX_SEARCH_HITS = 100;
export const DEFAULT_SEARCH_HITS = 20;

/** Schemas of the memory and knowledge API's arguments, by what an error calls them. */
export const apiSchemas = {
  id,
  title: nonBlank.pipe(z.string().max(MAX_TITLE_CHARS)),
  json: z.string(),
  importOptions: z
    .object({
      replace: z.boolean().exactOptional(),
      allowSystemMessages: z.boolean().exactOptional(),
    })
    .optional(),
  listConversationsOptions: z
    .object({
      limit: z.int().min(1).optional(),
      after: z.object({ id, updatedAt: z.number() }).optional(),
    })
    .optional(),
  listMemoriesOptions: z
    .object({
      scopes: z
        .array(z.string().refine(isMemoryScope, 'is not a memory scope'))
        .transform((scopes) => scopes as MemoryScope[])
        .exactOptional(),
      includeExpired: z.boolean().exactOptional(),
    })
    .optional(),
  memoryInput: z.record(z.string(), z.unknown()),
  // Only these fields may change; their values are checked by the memory rules.
  memoryPatch: z.strictObject({
    key: z.unknown().optional(),
    content: z.unknown().optional(),
    importance: z.unknown().optional(),
    expiresAt: z.unknown().optional(),
  }),
  listRunsOptions: z
    .object({
      conversationId: id.exactOptional(),
      statuses: z
        .array(z.enum(['running', 'awaiting-approval', 'finished', 'interrupted', 'failed']))
        .exactOptional(),
    })
    .optional(),
  listProposalsOptions: z.object({ conversationId: id.exactOptional() }).optional(),
  toolCallsOptions: z
    .object({
      conversationId: id.exactOptional(),
      runId: id.exactOptional(),
      limit: z.int().min(1).exactOptional(),
    })
    .optional(),
  document: z.object({
    id,
    title: z.string().max(MAX_TITLE_CHARS),
    text: z.string().max(MAX_DOCUMENT_CHARS),
    metadata: z.record(z.string(), z.unknown()).exactOptional(),
  }),
  query: nonBlank.pipe(z.string().max(MAX_QUERY_CHARS)),
  // Blank is allowed here: a search box that is cleared finds nothing rather than failing.
  searchQuery: z.string().max(MAX_QUERY_CHARS),
  searchOptions: z
    .object({ limit: z.int().min(1).max(MAX_SEARCH_HITS).exactOptional() })
    .optional(),
  k: z.int().min(1).max(MAX_SEARCH_K).optional(),
  onProgress: z
    .custom<(progress: KnowledgeProgress) => void>((value) => typeof value === 'function')
    .optional(),
};

/**
 * Parses one argument of the caller's. The error names the field at fault (`options.limit`,
 * `document.id`) in its message and `details.field`; with `root`, fields are named without
 * the argument's own name (a request's `input`, not `request.input`).
 */
export function parseArgument<T>(
  schema: z.ZodType<T>,
  value: unknown,
  name: string,
  code: FieldErrorCode,
  options: { readonly root?: boolean; readonly inputFields?: readonly string[] } = {},
): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path ?? [];
  // Named as the page names them: `options.scopes[0]`, `document.id`.
  const inner = path
    .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
    .join('');
  const field =
    path.length === 0 ? name : options.root ? inner.replace(/^\./, '') : `${name}${inner}`;
  const first = path[0];
  const fieldCode =
    typeof first === 'string' && options.inputFields?.includes(first) ? 'invalid-input' : code;
  throw new AirlockError(fieldCode, `\`${field}\` is not valid: ${issue?.message ?? 'unknown'}.`, {
    details: { field },
  });
}
