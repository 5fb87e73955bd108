import { AirlockError } from '../errors/airlock-error';
import type { MemorySource } from '../protocol/memory';
import type { MemoryInput, MemoryRecord, MemoryScope } from './store';
import type { StoreChange } from './store-change';

/** The longest memory key: a short label, not a place for content. */
export const MAX_MEMORY_KEY_CHARS = 200;

/**
 * The longest memory content. Memories go into the instructions of every run, so one
 * large memory (pasted by a caller, or saved by a model told to) would crowd out the rest.
 */
export const MAX_MEMORY_CONTENT_CHARS = 10_000;

/** Importance of a memory saved without one: neither pushed forward nor back. */
export const DEFAULT_IMPORTANCE = 0.5;

/** True for `global`, `user:<id>` or `conversation:<id>` with a non-empty id. */
export function isMemoryScope(value: string): value is MemoryScope {
  return value === 'global' || /^(?:user|conversation):./s.test(value);
}

/** True if the memory has an expiry at or before `now`: it is ignored and may be pruned. */
export function isExpired(memory: Pick<MemoryRecord, 'expiresAt'>, now: number): boolean {
  return memory.expiresAt !== undefined && memory.expiresAt <= now;
}

/** Sort order of memories: more important first, then the most recently updated. */
export function compareMemories(a: MemoryRecord, b: MemoryRecord): number {
  return b.importance - a.importance || b.updatedAt - a.updatedAt;
}

/** A memory input with its defaults filled in. */
export interface NormalizedMemoryInput {
  readonly key: string;
  readonly content: string;
  readonly importance: number;
  readonly scope: MemoryScope;
  readonly expiresAt?: number;
  readonly source?: MemorySource;
}

function invalid(message: string, field: string): AirlockError {
  return new AirlockError('invalid-input', message, { details: { field } });
}

function checkKey(key: unknown): void {
  if (typeof key !== 'string' || key.trim() === '' || key.length > MAX_MEMORY_KEY_CHARS)
    throw invalid(
      `A memory needs a non-empty string \`key\` of at most ${MAX_MEMORY_KEY_CHARS} characters.`,
      'key',
    );
}

function checkContent(content: unknown): void {
  if (typeof content !== 'string' || content.length > MAX_MEMORY_CONTENT_CHARS)
    throw invalid(
      `A memory \`content\` must be a string of at most ${MAX_MEMORY_CONTENT_CHARS} characters.`,
      'content',
    );
}

function checkImportance(importance: unknown): void {
  if (typeof importance !== 'number' || !(importance >= 0 && importance <= 1))
    throw invalid('A memory `importance` must be a number from 0 to 1.', 'importance');
}

function checkExpiresAt(expiresAt: unknown): void {
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt))
    throw invalid('A memory `expiresAt` must be a finite epoch time in milliseconds.', 'expiresAt');
}

/**
 * Checks a memory to save and fills in its defaults. Memories may come from a tool the
 * model called, so the types are not trusted: a bad field is `invalid-input`.
 */
export function normalizeMemoryInput(input: MemoryInput): NormalizedMemoryInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw invalid('A memory must be an object `input` { key, content }.', 'input');
  checkKey(input.key);
  checkContent(input.content);
  const importance = input.importance ?? DEFAULT_IMPORTANCE;
  checkImportance(importance);
  const scope = input.scope ?? 'global';
  if (typeof scope !== 'string' || !isMemoryScope(scope))
    throw invalid(
      'A memory `scope` must be "global", "user:<id>" or "conversation:<id>".',
      'scope',
    );
  const base = {
    key: input.key,
    content: input.content,
    importance,
    scope,
    ...(input.source === undefined ? {} : { source: checkedSource(input.source) }),
  };
  if (input.expiresAt === undefined) return base;
  checkExpiresAt(input.expiresAt);
  return { ...base, expiresAt: input.expiresAt };
}

/** The longest `reason` a model-learnt memory's source keeps. */
export const MAX_SOURCE_REASON_CHARS = 500;

/** A memory's `source`, copied field by field so nothing else rides along. */
function checkedSource(source: unknown): MemorySource {
  const fields = source as Record<string, unknown> | null;
  const text = (value: unknown, maxChars = MAX_MEMORY_KEY_CHARS) =>
    typeof value === 'string' && value !== '' && value.length <= maxChars;
  if (
    typeof source !== 'object' ||
    fields === null ||
    !(
      (fields.via === 'rule' && text(fields.rule)) ||
      (fields.via === 'model' && text(fields.reason, MAX_SOURCE_REASON_CHARS))
    ) ||
    !text(fields.runId) ||
    !text(fields.conversationId)
  )
    throw invalid(
      'A memory `source` must be { via: "rule", rule, runId, conversationId } or { via: "model", reason, runId, conversationId } with short strings.',
      'source',
    );
  const run = { runId: fields.runId as string, conversationId: fields.conversationId as string };
  return fields.via === 'rule'
    ? { via: 'rule', rule: fields.rule as string, ...run }
    : { via: 'model', reason: fields.reason as string, ...run };
}

/** Checks the fields of a memory update, as `normalizeMemoryInput` does for a new one. */
export function checkMemoryPatch(
  patch: Partial<Pick<MemoryRecord, 'content' | 'importance' | 'expiresAt' | 'key'>>,
): void {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
    throw invalid('A memory `patch` must be an object.', 'patch');
  if (patch.key !== undefined) checkKey(patch.key);
  if (patch.content !== undefined) checkContent(patch.content);
  if (patch.importance !== undefined) checkImportance(patch.importance);
  if (patch.expiresAt !== undefined) checkExpiresAt(patch.expiresAt);
}

/** The scope of memories that belong to one conversation. */
export function conversationScope(conversationId: string): MemoryScope {
  return `conversation:${conversationId}`;
}

/** The id of the conversation a memory of `scope` belongs to, if it is a conversation's. */
export function conversationOfScope(scope: unknown): string | undefined {
  const prefix = conversationScope('');
  return typeof scope === 'string' && scope.startsWith(prefix)
    ? scope.slice(prefix.length)
    : undefined;
}

/**
 * The change notification for a write to a memory of `scope`. The scope may come from a
 * stored row, which can hold anything: a write that already committed must not fail on it.
 */
export function memoryChange(scope: unknown): StoreChange {
  const conversationId = conversationOfScope(scope);
  return conversationId === undefined
    ? { table: 'memories' }
    : { table: 'memories', conversationId };
}

/** A new memory id. Built from `getRandomValues`: `randomUUID` is missing outside secure contexts. */
export function newMemoryId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `mem_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
