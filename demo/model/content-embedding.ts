/**
 * The offline model's embeddings: Airlock's hashed bag of words over a text's content
 * words only. Words like "what", "is", "the" and "of" are in nearly every text, so with
 * them "What is the capital of France?" scored 0.24 against a holiday policy and the
 * offline model quoted it. A light plural fold ("holidays" → "holiday") lets a question
 * meet the document's own wording. The page keeps passages scoring at least
 * `OFFLINE_KNOWLEDGE_MIN_SCORE` by it. Imports carry `.js` for Node (the demo servers).
 */
import { hashedEmbedding } from '../../src/testing/hashed-embedding.js';

/** Function words, question words and auxiliaries: they tell nothing about a text's topic. */
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before
  being below between both but by can could did do does doing down during each few for
  from further had has have having he her here hers herself him himself his how i if in
  into is it its itself just me more most my myself no nor not now of off on once only or
  other our ours ourselves out over own same she should so some such than that the their
  theirs them themselves then there these they this those through to too under until up
  very was we were what when where which while who whom whose why will with would you
  your yours yourself yourselves many much tell please let us also get got may might must
  shall`.split(/\s+/),
);

/** The words of `text` that carry its topic, lower-cased and folded to the singular. */
export function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((word) => !STOP_WORDS.has(word))
    .map(singular);
}

/** The embedding of `text`'s content words, of unit length (all zeros when it has none). */
export function contentEmbedding(text: string, dimension?: number): number[] {
  return hashedEmbedding(contentWords(text).join(' '), dimension);
}

/** "policies" → "policy", "days" → "day"; "glass", "bus" and short words stay as they are. */
function singular(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !/(ss|us|is)$/.test(word)) {
    return word.slice(0, -1);
  }
  return word;
}
