/** How a text is cut into chunks. */
export interface ChunkOptions {
  /** Target chunk length, in characters. */
  readonly chunkChars: number;
  /** Characters each chunk repeats from the end of the previous one (less than `chunkChars`). */
  readonly overlapChars: number;
}

/** The last part of a window searched for a natural break before cutting mid-word. */
const BREAK_SEARCH = 0.25;

/**
 * Cuts `text` into chunks of at most `chunkChars`, each starting `overlapChars` before the
 * previous one ended, so a sentence cut at a border is whole in one of them. A chunk ends at
 * a paragraph, line, sentence or word break in its last quarter when there is one.
 * Whitespace-only chunks are dropped; an empty text gives no chunks.
 */
export function chunkText(text: string, options: ChunkOptions): string[] {
  const { chunkChars, overlapChars } = options;
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + chunkChars, text.length);
    if (end < text.length) end = breakBefore(text, start, end);
    const chunk = text.slice(start, end).trim();
    if (chunk) chunks.push(chunk);
    if (end >= text.length) break;
    // Always move forward, even when the overlap would reach back past this chunk's start.
    start = Math.max(start + 1, end - overlapChars);
  }
  return chunks;
}

/** The best place to end a chunk `[start, end)`: just after the strongest break near its end. */
function breakBefore(text: string, start: number, end: number): number {
  const from = end - Math.floor((end - start) * BREAK_SEARCH);
  const window = text.slice(from, end);
  for (const pattern of [/\n\s*\n/g, /\n/g, /[.!?]\s/g, /\s/g]) {
    let last = -1;
    for (const match of window.matchAll(pattern)) last = match.index + match[0].length;
    if (last > 0) return from + last;
  }
  return end;
}
