/** The longest `pattern` (or `patternProperties` key) an untrusted schema may use. */
export const MAX_PATTERN_CHARS = 1_000;

import { loadChunk } from '../../runtime/load-chunk';

/** Tests a string against one compiled pattern, in time linear in the string's length. */
export type PatternMatcher = (text: string) => boolean;

/** The patterns of a schema compiled for a linear-time engine, or why one cannot be. */
export type CompiledPatterns =
  | { readonly ok: true; readonly matchers: ReadonlyMap<string, PatternMatcher> }
  | { readonly ok: false; readonly reason: string };

/**
 * Compiles the regular expressions of an untrusted JSON Schema with RE2 (re2js), whose
 * matching time is linear in the input: a backtracking engine (the browser's own) takes
 * exponential time on patterns such as `^(a+)+$`, and a schema's author chooses both the
 * pattern and, often, the value. A pattern RE2 cannot express (lookaround, backreferences)
 * is refused rather than run unchecked. re2js is loaded here, on demand: only a schema with
 * a pattern needs it.
 */
export async function compilePatterns(sources: Iterable<string>): Promise<CompiledPatterns> {
  const unique = [...new Set(sources)];
  const matchers = new Map<string, PatternMatcher>();
  if (unique.length === 0) return { ok: true, matchers };
  const { RE2JS } = await loadChunk('re2js', () => import('re2js'));
  for (const source of unique) {
    const shown = JSON.stringify(source.length > 80 ? `${source.slice(0, 80)}…` : source);
    if (source.length > MAX_PATTERN_CHARS) {
      return {
        ok: false,
        reason: `its pattern ${shown} is longer than ${MAX_PATTERN_CHARS} characters`,
      };
    }
    try {
      // Only parsed, never run: parsing takes time linear in the pattern.
      new RegExp(source, 'u');
    } catch {
      return { ok: false, reason: `its pattern ${shown} is not a valid regular expression` };
    }
    try {
      const compiled = RE2JS.compile(RE2JS.translateRegExp(source));
      matchers.set(source, (text) => compiled.test(text));
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return {
        ok: false,
        reason: `its pattern ${shown} cannot be checked in linear time (${why})`,
      };
    }
  }
  return { ok: true, matchers };
}

/**
 * Every regular expression a JSON Schema validator may run for `schema`: the string value
 * of each `pattern` key and the keys of each `patternProperties` object, wherever they are
 * (a `$ref` can reach any part of the schema). A `pattern` inside data such as an `enum`
 * is collected too: refusing it is safe, missing one is not. Iterative, so a deeply nested
 * schema cannot overflow the stack.
 */
export function collectPatterns(schema: unknown): Set<string> {
  const patterns = new Set<string>();
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (const item of node) pending.push(item);
      continue;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') patterns.add(value);
      if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
        for (const pattern of Object.keys(value)) patterns.add(pattern);
      }
      pending.push(value);
    }
  }
  return patterns;
}
