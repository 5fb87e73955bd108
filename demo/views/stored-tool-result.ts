/**
 * Reads a stored tool message back into what its card shows. Airlock stores the content
 * the model saw: `<tool_output tool="…" call_id="…" status="ok|error">…</tool_output>`,
 * with `{"error":{"code","message"}}` inside for a failure.
 */
import { asRecord, parseJson } from '../shared/json-values';
import { unwrapToolOutput } from '../shared/tool-output';
import type { ToolFailure } from './tool-card';

/** A stored call's outcome: its output, or its error. */
export type StoredToolResult =
  | { readonly ok: true; readonly output: unknown }
  | { readonly ok: false; readonly error: ToolFailure };

const ERROR_STATUS = /^\s*<tool_output\b[^>]*\bstatus="error"/;

/** The outcome recorded in a tool message's content. */
export function readStoredToolResult(content: string): StoredToolResult {
  const body = parseJson(unwrapToolOutput(content));
  if (!ERROR_STATUS.test(content)) return { ok: true, output: body };
  const error = asRecord(asRecord(body).error);
  return {
    ok: false,
    error: {
      code: typeof error.code === 'string' ? error.code : 'tool-failed',
      message: typeof error.message === 'string' ? error.message : String(body),
    },
  };
}
