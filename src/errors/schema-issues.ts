import { z } from 'zod/mini';
import type { ErrorCode } from '../protocol/errors';
import { AirlockError } from './airlock-error';

/**
 * Gives zod's issues their English messages, which every message of ours quotes. zod's classic
 * API loads them as its first schema is made; `zod/mini` (ours, for its bytes) loads no locale,
 * and its parses would say only "Invalid input". Called before a parse rather than at import,
 * since nothing of `src/` acts as it is imported; a locale the app chose is kept.
 */
export function useEnglishMessages(): void {
  if (!z.config().localeError) z.config(z.locales.en());
}

/** `schema.safeParse(value)` with zod's English messages: the one way `src/` parses with zod. */
export function safeParse<T>(schema: z.ZodMiniType<T>, value: unknown): z.util.SafeParseResult<T> {
  useEnglishMessages();
  return schema.safeParse(value);
}

/**
 * The one way a failed zod parse is put in words: each problem as `path: message`, the
 * path dotted (`messages.3.content`) and `(root)` for the value itself.
 */
export function describeIssues(error: z.core.$ZodError): string[] {
  return error.issues.map(
    (issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`,
  );
}

/**
 * What `schema` parses `value` to, or an error of `code` (default `invalid-options`) saying
 * `what` failed, listing every problem in `details.issues` and naming the first in
 * `details.field` and, in backticks, in the message, as the page's own checks do.
 */
export function parseOrThrow<T>(
  schema: z.ZodMiniType<T>,
  value: unknown,
  what: string,
  code: ErrorCode = 'invalid-options',
): T {
  const parsed = safeParse(schema, value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `\`${fieldPath(issue.path) || '(root)'}\`: ${issue.message}`,
  );
  const field = fieldPath(parsed.error.issues[0]?.path ?? []) || '(root)';
  throw new AirlockError(code, `${what}: ${problems.join('; ')}.`, {
    details: { field, issues: problems },
  });
}

/** A path as the page's checks name fields: `mcp[0].url`, so both sides name a field alike. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) =>
      typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`,
    )
    .join('');
}
