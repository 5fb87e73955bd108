import { AirlockError } from '../errors/airlock-error';

/** A chunk's place in the index: its document and position. */
export interface ChunkKey {
  readonly docId: string;
  readonly index: number;
}

/** A search result: the chunk and its cosine similarity to the query. */
export interface ScoredKey extends ChunkKey {
  readonly score: number;
}

/**
 * Every chunk's vector in one `Float32Array`, row after row, searched by brute force: a
 * dot product per row (vectors are stored at unit length, so it is the cosine). Rows are
 * added and removed per document without rebuilding; a removed row is filled by the last.
 * Lives in the agent worker, loaded once from the store.
 */
export class VectorIndex {
  #dimension: number | undefined;
  #rows: Float32Array = new Float32Array(0);
  #keys: ChunkKey[] = [];
  /** Each document's row numbers, so removing one does not scan the others. */
  readonly #rowsByDoc = new Map<string, number[]>();

  /** The vectors' length, fixed by the first one added (undefined while empty and never filled). */
  get dimension(): number | undefined {
    return this.#dimension;
  }

  get size(): number {
    return this.#keys.length;
  }

  /**
   * Throws `knowledge-dimension-mismatch` unless `length` is the index's dimension (or the
   * index has none yet): vectors of different models cannot be compared.
   */
  checkDimension(length: number): void {
    if (this.#dimension !== undefined && this.#dimension !== length) {
      throw new AirlockError(
        'knowledge-dimension-mismatch',
        `The embedding has ${length} dimensions but the stored knowledge has ${this.#dimension}: ` +
          'the embedding model changed. Remove the documents and add them again with the new model.',
        { details: { expected: this.#dimension, received: length } },
      );
    }
  }

  /** Adds a document's chunks (replacing the rows it had). Vectors must already be unit length. */
  setDocument(docId: string, chunks: readonly { index: number; vector: Float32Array }[]): void {
    for (const chunk of chunks) this.checkDimension(chunk.vector.length);
    this.removeDocument(docId);
    const first = chunks[0];
    if (!first) return;
    this.#dimension ??= first.vector.length;
    const dimension = this.#dimension;
    this.#reserve(this.#keys.length + chunks.length);
    const rows: number[] = [];
    for (const chunk of chunks) {
      const row = this.#keys.length;
      this.#rows.set(chunk.vector, row * dimension);
      this.#keys.push({ docId, index: chunk.index });
      rows.push(row);
    }
    this.#rowsByDoc.set(docId, rows);
  }

  /** Removes a document's rows; the last rows move into the gaps. */
  removeDocument(docId: string): void {
    const rows = this.#rowsByDoc.get(docId);
    if (!rows) return;
    this.#rowsByDoc.delete(docId);
    const dimension = this.#dimension ?? 0;
    // Highest first, so a row moved into a gap is never one still to be removed.
    for (const row of [...rows].sort((a, b) => b - a)) {
      const last = this.#keys.length - 1;
      if (row !== last) {
        const moved = this.#keys[last] as ChunkKey;
        this.#rows.copyWithin(row * dimension, last * dimension, (last + 1) * dimension);
        this.#keys[row] = moved;
        const movedRows = this.#rowsByDoc.get(moved.docId) ?? [];
        movedRows[movedRows.indexOf(last)] = row;
      }
      this.#keys.pop();
    }
  }

  /** The `k` rows most similar to `query` scoring at least `minScore`, best first. */
  search(query: Float32Array, k: number, minScore: number): ScoredKey[] {
    if (this.#keys.length === 0 || k <= 0) return [];
    this.checkDimension(query.length);
    const dimension = this.#dimension as number;
    const rows = this.#rows;
    // The best k so far, kept sorted best first; small k makes insertion cheaper than a heap.
    const bestRows: number[] = [];
    const bestScores: number[] = [];
    let floor = minScore;
    for (let row = 0, offset = 0; row < this.#keys.length; row++, offset += dimension) {
      let score = 0;
      for (let i = 0; i < dimension; i++)
        score += (rows[offset + i] as number) * (query[i] as number);
      if (score < floor) continue;
      let at = bestScores.length;
      while (at > 0 && (bestScores[at - 1] as number) < score) at--;
      bestScores.splice(at, 0, score);
      bestRows.splice(at, 0, row);
      if (bestScores.length > k) {
        bestScores.pop();
        bestRows.pop();
      }
      if (bestScores.length === k) floor = Math.max(minScore, bestScores[k - 1] as number);
    }
    return bestRows.map((row, i) => ({
      ...(this.#keys[row] as ChunkKey),
      score: bestScores[i] as number,
    }));
  }

  /** Grows the row buffer (doubling) to hold `count` rows. */
  #reserve(count: number): void {
    const dimension = this.#dimension ?? 0;
    if (count * dimension <= this.#rows.length) return;
    const grown = new Float32Array(Math.max(count, this.#keys.length * 2, 64) * dimension);
    grown.set(this.#rows.subarray(0, this.#keys.length * dimension));
    this.#rows = grown;
  }
}

/** `values` as a unit-length `Float32Array` (unchanged direction; all zeros stays zeros). */
export function toUnitVector(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (const value of vector) sum += value * value;
  const length = Math.sqrt(sum);
  if (length > 0)
    for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / length;
  return vector;
}
