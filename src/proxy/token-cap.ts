/**
 * The output-token cap: keeps one page from asking the upstream for an arbitrarily long
 * (and costly) completion on the server's key.
 */

/** The two names Chat Completions accepts for the output limit, older one first. */
const LIMIT_FIELDS = ['max_tokens', 'max_completion_tokens'] as const;

/**
 * Lowers every output limit in `body` above `cap` (or not a number) to `cap`, in place;
 * with none given, sets `max_completion_tokens`, the field every current OpenAI chat
 * model accepts (reasoning models reject `max_tokens`). Returns whether it changed anything.
 */
export function capOutputTokens(body: Record<string, unknown>, cap: number): boolean {
  let present = false;
  let changed = false;
  for (const field of LIMIT_FIELDS) {
    const value = body[field];
    // `null` is the API's spelling of "no limit", the same as leaving the field out.
    if (value === undefined || value === null) continue;
    present = true;
    if (typeof value !== 'number' || !Number.isFinite(value) || value > cap) {
      body[field] = cap;
      changed = true;
    }
  }
  if (!present) {
    body.max_completion_tokens = cap;
    changed = true;
  }
  return changed;
}
