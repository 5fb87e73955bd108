/**
 * The one synthetic cost of the responsiveness comparison, labelled as such on the page.
 * Before every model call an agent counts the tokens of its stored history to choose the
 * window it sends. The demo's test conversation is short, so a long one is stood in for by
 * a generated history of {@link HISTORY_MESSAGES} messages (about 1.4 MB of JSON, tool
 * output included: an agent that has worked for a while), counted with a small byte-pair
 * tokeniser about as fast per character as the JavaScript tokenisers of real models
 * (~10 MB/s here). Both loops do exactly this before each model call: the page-thread loop
 * on the page, Airlock in its agent worker. Without it, the short test conversation alone
 * gives no long frame even on the page (BENCHMARKS.md: the hand-written page loop, 0 gaps
 * over 50 ms): a page-thread agent stutters at the scale of real conversations.
 */
import { prose } from '../../bench/peers/scenario';

/** Messages in the stand-in history. */
export const HISTORY_MESSAGES = 1500;

/** GPT-style pre-tokenisation: contractions, words, numbers, punctuation runs, spaces. */
const PIECES = /'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

let history: string | undefined;

/** The stand-in history as the JSON an agent would send, built once per thread. */
export function standInHistory(): string {
  history ??= JSON.stringify(
    Array.from({ length: HISTORY_MESSAGES }, (_, index) =>
      index % 3 === 2
        ? {
            role: 'tool',
            tool_call_id: `call_${index}`,
            content: JSON.stringify({ rows: prose(120, `row${index}`).split(' ') }),
          }
        : { role: index % 3 === 0 ? 'user' : 'assistant', content: prose(140, `Turn${index}:`) },
    ),
  );
  return history;
}

/**
 * Counts the tokens of `text` as byte-pair encoders do: split into pieces, then in each
 * piece merge the adjacent pair of lowest rank until no pair is in `ranks`.
 */
export function countTokens(text: string, ranks: ReadonlyMap<string, number>): number {
  let tokens = 0;
  for (const [piece] of text.matchAll(PIECES)) tokens += mergePairs(piece, ranks);
  return tokens;
}

/** The number of tokens one piece merges down to. */
function mergePairs(piece: string, ranks: ReadonlyMap<string, number>): number {
  const parts = [...piece];
  for (;;) {
    let best = -1;
    let bestRank = Number.POSITIVE_INFINITY;
    for (let i = 0; i + 1 < parts.length; i++) {
      const rank = ranks.get(parts[i]! + parts[i + 1]!);
      if (rank !== undefined && rank < bestRank) {
        best = i;
        bestRank = rank;
      }
    }
    if (best < 0) return parts.length;
    parts.splice(best, 2, parts[best]! + parts[best + 1]!);
  }
}

let mergeRanks: Map<string, number> | undefined;

/**
 * Merge ranks learnt from the history's own words (every prefix of each word, with and
 * without its leading space, shorter ones first), so its words end as one token each.
 */
function historyRanks(): ReadonlyMap<string, number> {
  if (mergeRanks) return mergeRanks;
  const ranks = new Map<string, number>();
  const words = prose(40, 'x').split(' ');
  for (let length = 2; length <= 16; length++) {
    for (const word of words.flatMap((each) => [each, ` ${each}`])) {
      if (word.length >= length && !ranks.has(word.slice(0, length))) {
        ranks.set(word.slice(0, length), ranks.size);
      }
    }
  }
  mergeRanks = ranks;
  return ranks;
}

/**
 * The context-building step before a model call: the tokens of the stand-in history plus
 * the request's own messages (`body`, the request's JSON).
 */
export function countContextTokens(body: string): number {
  const ranks = historyRanks();
  return countTokens(standInHistory(), ranks) + countTokens(body, ranks);
}

/**
 * Wraps `networkFetch` so every chat-completion request first builds its context with
 * {@link countContextTokens}, where this thread runs it; other requests pass straight on.
 */
export function contextCountingFetch(networkFetch: typeof fetch): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.endsWith('/chat/completions') && typeof init?.body === 'string') {
      countContextTokens(init.body);
    }
    return networkFetch(input, init);
  };
}
