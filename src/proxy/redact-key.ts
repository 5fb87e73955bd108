/**
 * Blanking the configured key out of text the proxy returns: the key itself, and the masked
 * forms providers quote in errors (`sk-abc1****wxyz`, `sk-proj-…********…wxyz`), recognised
 * by a visible prefix or suffix taken from the key.
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

/** Characters a key is made of. */
const KEY_CHAR = /[A-Za-z0-9_-]/;

/** Returns its text with the key and masked fragments of it replaced by `[redacted]`. */
export type Redactor = (text: string) => string;

/**
 * The redactor for `apiKey`. Linear in the text: masks are found first, and only the
 * key-like characters right around each (at most the key's length) are looked at.
 */
export function createRedactor(apiKey: string): Redactor {
  if (apiKey.length < MIN_KEY_CHARS) return (text) => text;
  return (text) => {
    const plain = text.includes(apiKey) ? text.replaceAll(apiKey, REDACTED) : text;
    return redactMasked(plain, apiKey);
  };
}

function redactMasked(text: string, apiKey: string): string {
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
