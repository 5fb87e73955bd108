import { z } from 'zod/mini';
import { AirlockError } from '../../errors/airlock-error';
import {
  checkField,
  type FieldErrorCode,
  MAX_ID_CHARS,
  TOOL_NAME,
} from '../../errors/field-checks';
import { inputTooLarge } from '../../errors/input-errors';
import { safeParse } from '../../errors/schema-issues';
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

const nonBlank = z.string().check(z.refine((value) => value.trim() !== '', 'must not be blank'));
export const id = z.pipe(nonBlank, z.string().check(z.maxLength(MAX_ID_CHARS)));
const toolNames = z.array(z.string().check(z.regex(TOOL_NAME)));

/** The longest output JSON Schema a run may carry, in characters of its JSON. */
export const MAX_OUTPUT_SCHEMA_CHARS = 100_000;

/** A run's structured output: a JSON Schema of an object, small enough to send with each call. */
const outputRequest = z.object({
  jsonSchema: z.record(z.string(), z.unknown()).check(
    z.refine((schema) => schema.type === 'object', 'must be the JSON Schema of an object'),
    z.refine(
      (schema) => (jsonLength(schema) ?? Number.POSITIVE_INFINITY) <= MAX_OUTPUT_SCHEMA_CHARS,
      `must be JSON of at most ${MAX_OUTPUT_SCHEMA_CHARS} characters`,
    ),
  ),
});

/** The longest instructions a run may bring, in characters. */
export const MAX_RUN_INSTRUCTIONS_CHARS = 100_000;

/** What a run or a resume may change about its model calls; `modelOptions` is checked after. */
const runOverrides = {
  model: z.exactOptional(id),
  modelOptions: z.exactOptional(z.record(z.string(), z.unknown())),
  instructions: z.exactOptional(z.string().check(z.maxLength(MAX_RUN_INSTRUCTIONS_CHARS))),
  tools: z.exactOptional(toolSpecsSchema),
};

const imageDetail = z.exactOptional(z.enum(['auto', 'low', 'high']));
const blob = z.custom<Blob>((value) => value instanceof Blob, 'must be a Blob');
const mediaType = z.exactOptional(z.string().check(z.maxLength(100)));
const level = z.exactOptional(z.string().check(z.regex(/\S/), z.maxLength(MAX_LEVEL_CHARS)));
/** An attachment's label: a level only (its content is never trusted), so `integrity` is refused. */
const attachmentLabel = z.exactOptional(z.strictObject({ confidentiality: level }));

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
    filename: z.exactOptional(z.string().check(z.maxLength(INPUT_LIMITS.maxFilenameChars))),
    label: attachmentLabel,
  }),
]);

/** A run's input: text, or parts. */
export const runInput = z.union([
  nonBlank,
  z.array(inputPart).check(
    z.minLength(1),
    z.maxLength(MAX_CONTENT_PARTS),
    z.refine(
      (parts) => parts.some((part) => part.type !== 'text' || part.text.trim() !== ''),
      'must have a part that is not blank',
    ),
  ),
]);

/** A run request's fields; a retry's (`refused-retry.ts`) are these with `retryOf`. */
export const runRequestSchema = z.object({
  runId: id,
  input: runInput,
  conversationId: id,
  allowedTools: z.exactOptional(toolNames),
  output: z.exactOptional(outputRequest),
  labels: z.exactOptional(z.object({ confidentiality: level })),
  toolCall: z.exactOptional(
    z.strictObject({
      caller: z.literal('webmcp'),
      name: z.string().check(z.regex(TOOL_NAME)),
      arguments: z.unknown(),
    }),
  ),
  ...runOverrides,
});

const resumeRequestSchema = z.object({
  runId: id,
  allowedTools: z.exactOptional(toolNames),
  output: z.exactOptional(outputRequest),
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
  schema: z.ZodMiniType = runRequestSchema,
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
  title: z.pipe(nonBlank, z.string().check(z.maxLength(MAX_TITLE_CHARS))),
  json: z.string(),
  importOptions: z.optional(
    z.object({
      replace: z.exactOptional(z.boolean()),
      allowSystemMessages: z.exactOptional(z.boolean()),
    }),
  ),
  listConversationsOptions: z.optional(
    z.object({
      limit: z.optional(z.int().check(z.gte(1))),
      after: z.optional(z.object({ id, updatedAt: z.number() })),
    }),
  ),
  listMemoriesOptions: z.optional(
    z.object({
      scopes: z.exactOptional(
        z.pipe(
          z.array(z.string().check(z.refine(isMemoryScope, 'is not a memory scope'))),
          z.transform((scopes) => scopes as MemoryScope[]),
        ),
      ),
      includeExpired: z.exactOptional(z.boolean()),
    }),
  ),
  memoryInput: z.record(z.string(), z.unknown()),
  // Only these fields may change; their values are checked by the memory rules.
  memoryPatch: z.strictObject({
    key: z.optional(z.unknown()),
    content: z.optional(z.unknown()),
    importance: z.optional(z.unknown()),
    expiresAt: z.optional(z.unknown()),
  }),
  listRunsOptions: z.optional(
    z.object({
      conversationId: z.exactOptional(id),
      statuses: z.exactOptional(
        z.array(z.enum(['running', 'awaiting-approval', 'finished', 'interrupted', 'failed'])),
      ),
    }),
  ),
  listProposalsOptions: z.optional(z.object({ conversationId: z.exactOptional(id) })),
  toolCallsOptions: z.optional(
    z.object({
      conversationId: z.exactOptional(id),
      runId: z.exactOptional(id),
      limit: z.exactOptional(z.int().check(z.gte(1))),
    }),
  ),
  document: z.object({
    id,
    title: z.string().check(z.maxLength(MAX_TITLE_CHARS)),
    text: z.string().check(z.maxLength(MAX_DOCUMENT_CHARS)),
    metadata: z.exactOptional(z.record(z.string(), z.unknown())),
  }),
  query: z.pipe(nonBlank, z.string().check(z.maxLength(MAX_QUERY_CHARS))),
  // Blank is allowed here: a search box that is cleared finds nothing rather than failing.
  searchQuery: z.string().check(z.maxLength(MAX_QUERY_CHARS)),
  searchOptions: z.optional(
    z.object({ limit: z.exactOptional(z.int().check(z.gte(1), z.lte(MAX_SEARCH_HITS))) }),
  ),
  k: z.optional(z.int().check(z.gte(1), z.lte(MAX_SEARCH_K))),
  onProgress: z.optional(
    z.custom<(progress: KnowledgeProgress) => void>((value) => typeof value === 'function'),
  ),
};

/**
 * Parses one argument of the caller's. The error names the field at fault (`options.limit`,
 * `document.id`) in its message and `details.field`; with `root`, fields are named without
 * the argument's own name (a request's `input`, not `request.input`).
 */
export function parseArgument<T>(
  schema: z.ZodMiniType<T>,
  value: unknown,
  name: string,
  code: FieldErrorCode,
  options: { readonly root?: boolean; readonly inputFields?: readonly string[] } = {},
): T {
  const parsed = safeParse(schema, value);
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
