import type { z } from 'zod';
import type { ErrorCode } from '../protocol/errors';
import { AirlockError } from './airlock-error';

/**
 * The one way a failed zod parse is put in words: each problem as `path: message`, the
 * path dotted (`messages.3.content`) and `(root)` for the value itself.
 */
export function describeIssues(error: z.ZodError): string[] {
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
  schema: z.ZodType<T>,
  value: unknown,
  what: string,
  code: ErrorCode = 'invalid-options',
): T {
  const parsed = schema.safeParse(value);
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
