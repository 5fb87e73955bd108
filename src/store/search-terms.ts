import type { ChatMessage } from '../protocol/chat';

// The words the conversation search indexes and matches: lower case, accents taken off (so
// "café" finds "cafe"), split at anything that is neither a letter nor a digit. Scripts
// written without spaces (Chinese, Japanese) come out as runs of characters, found from
// their start.

const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}/gu;
/** Longer words are cut here: an index key stays small, and a query word is cut alike. */
const MAX_TERM_CHARS = 32;
/** The most words one message is found by (its first distinct ones). */
const MAX_TERMS_PER_MESSAGE = 500;
/** The most words of a query that are matched; more narrow nothing a user types. */
const MAX_QUERY_TERMS = 8;

/** `text` in lower case without accents, as words are compared. */
function fold(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase();
}

/** The distinct words of `text`, in order, at most `max`. */
function termsOf(text: string, max: number): string[] {
  const terms = new Set<string>();
  for (const [word] of fold(text).matchAll(WORD)) {
    terms.add(word.slice(0, MAX_TERM_CHARS));
    if (terms.size >= max) break;
  }
  return [...terms];
}

/**
 * What the search finds a message by: what the user and the assistant wrote. Tool
 * results and system text are data, not the conversation. Any stored row is taken: an
 * odd one has no text.
 */
export function searchableText(message: ChatMessage): string {
  if (typeof message !== 'object' || message === null) return '';
  if (message.role === 'assistant')
    return typeof message.content === 'string' ? message.content : '';
  if (message.role !== 'user') return '';
  const { content } = message;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part) => (part?.type === 'text' ? [String(part.text)] : [])).join(' ');
}

/** The words a message is indexed by. */
export function messageTerms(message: ChatMessage): string[] {
  return termsOf(searchableText(message), MAX_TERMS_PER_MESSAGE);
}

/** The words of a query; each must begin a word of a message that matches (search as you type). */
export function queryTerms(query: string): string[] {
  return termsOf(query, MAX_QUERY_TERMS);
}

/** A line of `text` around the first place a query word begins a word, for a result list. */
export function searchSnippet(text: string, terms: readonly string[], maxChars = 160): string {
  const folded = fold(text);
  let at = 0;
  // Folding keeps positions for nearly all text; where it does not (ligatures), the line
  // starts at the beginning.
  if (folded.length === text.length) {
    for (const match of folded.matchAll(WORD)) {
      if (terms.some((term) => match[0].startsWith(term))) {
        at = match.index;
        break;
      }
    }
  }
  const start = Math.max(0, at - Math.floor(maxChars / 4));
  const line = text
    .slice(start, start + maxChars)
    .replace(/\s+/g, ' ')
    .trim();
  return `${start > 0 ? '…' : ''}${line}${start + maxChars < text.length ? '…' : ''}`;
}
