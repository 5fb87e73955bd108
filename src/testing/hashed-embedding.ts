/**
 * Deterministic embeddings for tests and the offline demo: a hashed bag of words. Each
 * lower-cased word (letters and digits) adds ±1 to one of `dimension` buckets, chosen by
 * its FNV-1a hash; the sum is scaled to unit length. Same text, same vector; texts that
 * share words point the same way. No imports: the fake server and browser code share it.
 */

/** The length of hashed embeddings unless asked otherwise. */
export const HASHED_EMBEDDING_DIMENSION = 256;

/** The hashed bag-of-words vector of `text`, of unit length (all zeros for a text without words). */
export function hashedEmbedding(text: string, dimension = HASHED_EMBEDDING_DIMENSION): number[] {
  const vector = new Array<number>(dimension).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const hash = fnv1a(word);
    // The top bit picks the sign, so unrelated words cancel out instead of piling up.
    const bucket = (hash & 0x7fffffff) % dimension;
    vector[bucket] = (vector[bucket] ?? 0) + (hash & 0x80000000 ? -1 : 1);
  }
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((value) => value / length);
}

function fnv1a(word: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    hash ^= word.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
