import type { ToolErrorCode } from '../protocol/errors';
import type { ToolOutcome } from '../protocol/tools';

/** A failed tool call's outcome. */
export type ToolFailure = Extract<ToolOutcome, { ok: false }>;

/**
 * A failed tool call's outcome, with its code kept in the type: the one constructor every host
 * (the page, a sandbox, the run) builds a failure with, so it has one shape everywhere.
 */
export function toolFailure<Code extends ToolErrorCode>(
  code: Code,
  message: string,
): ToolFailure & { readonly error: { readonly code: Code } } {
  return { ok: false, error: { code, message } };
}
