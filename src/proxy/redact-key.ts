/**
 * Blanking the configured key out of text the proxy returns: the key itself, and the masked
 * forms providers quote in errors (`sk-abc1****wxyz`, `sk-proj-…********…wxyz`), recognised
 * by a visible prefix or suffix taken from the key. What the proxy returns is mostly JSON,
 * where any character may be written as an escape (`sk-\u0061…`, `\u006A`, `\/`), so the
 * search also runs over the text with those escapes read.
 */

/** What a key, or a masked fragment of it, is replaced with. */
export const REDACTED = '[redacted]';

/** Keys shorter than this are toys; blanking a letter or two would mangle every body. */
const MIN_KEY_CHARS = 8;

/** Visible characters on either side of a mask must come from the real key to count. */
const MIN_VISIBLE_PREFIX = 3;
const MIN_VISIBLE_SUFFIX = 2;

/** A mask: three or more `*` (or look-alikes), three or more dots, or an ellipsis. */
const MASK = /[*•∗·]{3,}|\.{3,}|…/g;

/** {@link MASK} without its state: whether a text has a mask at all (most have none). */
const HAS_MASK = /[*•∗·]{3}|\.{3}|…/;

/** Characters a key is made of. */
const KEY_CHAR = /[A-Za-z0-9_-]/;

/** Returns its text with the key and masked fragments of it replaced by `[redacted]`. */
export type Redactor = (text: string) => string;

/**
 * The redactor for `apiKey`. Linear in the text: masks are found first, and only the
 * key-like characters right around each (at most the key's length) are looked at.
 */
export function createRedactor(apiKey: string): Redactor {
  return createSecretsRedactor([apiKey]);
}

/**
 * The redactor for several secrets at once (an MCP server's credentials: a header's whole
 * value and the token in it). Secrets shorter than 8 characters are not looked for.
 */
export function createSecretsRedactor(secrets: readonly string[]): Redactor {
  const sought = [...new Set(secrets)].filter((secret) => secret.length >= MIN_KEY_CHARS);
  if (sought.length === 0) return (text) => text;
  const redactPlain = (text: string): string => {
    let result = text;
    for (const secret of sought) {
      if (result.includes(secret)) result = result.replaceAll(secret, REDACTED);
      result = redactMasked(result, secret);
    }
    return result;
  };
  return (text) => {
    const redacted = redactPlain(text);
    if (!ESCAPE_HINT.test(redacted)) return redacted;
    // With its escapes read, the text is the same JSON; it is returned so only when a secret was in it.
    const unescaped = unescapePrintable(redacted);
    const found = redactPlain(unescaped);
    return found === unescaped ? redacted : found;
  };
}

/** A cheap look for an escape that could spell a secret's character. */
const ESCAPE_HINT = /\\(?:u00[2-7]|\/)/;

/**
 * A whole backslash run (never a tail of one: that would rescan long runs) ending in
 * `\u00XX` or `\/`: an escape when the run is odd.
 */
const ESCAPE = /(?<!\\)(\\+)(?:u00([2-7][0-9a-fA-F])|\/)/g;

/**
 * `text` with every JSON escape of a printable ASCII character other than `"` and `\` read
 * (`\u0061` → `a`, `\/` → `/`). An escaped backslash before a `u` is not an escape, so
 * `\\u0061` stays. Inside JSON strings this changes no value; control characters, quotes and
 * backslashes stay escaped, so the text remains valid JSON.
 */
function unescapePrintable(text: string): string {
  return text.replace(ESCAPE, (whole, backslashes: string, hex: string | undefined) => {
    if (backslashes.length % 2 === 0) return whole;
    const char = hex === undefined ? '/' : String.fromCharCode(Number.parseInt(hex, 16));
    if (char === '"' || char === '\\' || char === '\x7f') return whole;
    return backslashes.slice(1) + char;
  });
}

function redactMasked(text: string, apiKey: string): string {
  // Most text (every streamed token) has no mask: no match iterator made for it.
  if (!HAS_MASK.test(text)) return text;
  let result = '';
  let copiedUpTo = 0;
  for (const match of text.matchAll(MASK)) {
    const maskStart = match.index;
    const maskEnd = maskStart + match[0].length;
    if (maskStart < copiedUpTo) continue;
    let start = maskStart;
    while (start > copiedUpTo && maskStart - start < apiKey.length && isKeyChar(text[start - 1])) {
      start--;
    }
    let end = maskEnd;
    while (end < text.length && end - maskEnd < apiKey.length && isKeyChar(text[end])) end++;
    if (!isFragmentOf(apiKey, text.slice(start, maskStart), text.slice(maskEnd, end))) continue;
    result += text.slice(copiedUpTo, start) + REDACTED;
    copiedUpTo = end;
  }
  return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
}

function isKeyChar(char: string | undefined): boolean {
  return char !== undefined && KEY_CHAR.test(char);
}

function isFragmentOf(apiKey: string, prefix: string, suffix: string): boolean {
  const prefixMatches = prefix.length >= MIN_VISIBLE_PREFIX && apiKey.startsWith(prefix);
  const suffixMatches = suffix.length >= MIN_VISIBLE_SUFFIX && apiKey.endsWith(suffix);
  // A generic prefix (`sk-`, `sk-proj-`) is every key's: with a visible suffix, that decides.
  if (prefixMatches && suffix.length >= MIN_VISIBLE_SUFFIX) return suffixMatches;
  return prefixMatches || suffixMatches;
}
