import { AirlockError } from '../errors/airlock-error';
import { writeCodes } from '../store/int8-codes';
import { Int8Scanner } from './int8-scan';
import type { CodesBlock } from './stored-vectors';

/** A chunk's place in the index: its document and position. */
export interface ChunkKey {
  readonly docId: string;
  readonly index: number;
}

/** A search result: the chunk and its cosine similarity to the query. */
export interface ScoredKey extends ChunkKey {
  readonly score: number;
}

/** How the index scans: int8 codes in WebAssembly SIMD then exact rescoring, or floats only. */
export type VectorScan = 'int8-simd' | 'exact';

/** Options of a `VectorIndex`. */
export interface VectorIndexOptions {
  /** `'exact'` scans the float vectors only (the fallback where WebAssembly is refused). Default `'auto'`. */
  readonly scan?: 'auto' | 'exact';
}

/** Candidates rescored exactly per search at least, and per result asked for. */
const MIN_CANDIDATES = 256;
const CANDIDATES_PER_RESULT = 8;

/**
 * Every chunk's vector in one `Float32Array`, row after row (unit length, so a dot product
 * is the cosine), and beside it an int8 copy with one scale per row in WebAssembly memory.
 * A search scans the int8 rows with SIMD (4× fewer bytes, 16 products per instruction),
 * keeps the best candidates in a small heap, and rescores those with the float vectors: the
 * scores returned are exact, and so is the order whenever the true best rows are among the
 * candidates (many more than asked for). Rows are added and removed per document without
 * rebuilding; a removed row is filled by the last. Lives in the agent worker.
 */
export class VectorIndex {
  #dimension: number | undefined;
  #rows: Float32Array = new Float32Array(0);
  #keys: ChunkKey[] = [];
  /** Each document's row numbers, so removing one does not scan the others. */
  readonly #rowsByDoc = new Map<string, number[]>();
  readonly #wantsQuantised: boolean;
  /** The int8 rows; undefined until the dimension is known, or where WebAssembly is refused. */
  #scanner: Int8Scanner | undefined;
  /** Per row, the float value of one int8 step. */
  #scales: Float32Array = new Float32Array(0);
  /** Rows announced by `reserve`, allocated when the dimension is known. */
  #reservedRows = 0;
  /** Int8 codes alone, no floats (see `fromCodes`): searches score with the codes. */
  #codesOnly = false;

  constructor(options: VectorIndexOptions = {}) {
    this.#wantsQuantised = options.scan !== 'exact';
  }

  /**
   * An index of the stored int8 copies alone (see `VectorCodesRecord`), to search with
   * while the floats are read: candidates are found as usual, but scored by their codes, so
   * scores are approximate (off by about 1 % of the cosine at most) and close rows may swap
   * places. Read only. Undefined where WebAssembly SIMD is refused (no scan of codes then).
   */
  static fromCodes(
    dimension: number,
    blocks: readonly CodesBlock[],
    count: number,
  ): VectorIndex | undefined {
    const scanner = Int8Scanner.create(Math.ceil(dimension / 16) * 16);
    if (!scanner) return undefined;
    scanner.reserve(count);
    const index = new VectorIndex();
    index.#codesOnly = true;
    index.#dimension = dimension;
    index.#scanner = scanner;
    index.#scales = new Float32Array(count);
    const { codes, stride } = scanner;
    for (const block of blocks) {
      const first = index.#keys.length;
      if (stride === dimension && block.kept.length === block.scales.length) {
        // Every vector of the block, rows as long as its vectors: one copy of each buffer.
        codes.set(block.codes, scanner.offset(first));
        index.#scales.set(block.scales, first);
      } else {
        block.kept.forEach((at, i) => {
          const from = at * dimension;
          codes.set(block.codes.subarray(from, from + dimension), scanner.offset(first + i));
          index.#scales[first + i] = block.scales[at] as number;
        });
      }
      for (const at of block.kept) {
        const docId = block.docIds[at] as string;
        const row = index.#keys.length;
        index.#keys.push({ docId, index: block.indexes[at] as number });
        const rows = index.#rowsByDoc.get(docId);
        if (rows) rows.push(row);
        else index.#rowsByDoc.set(docId, [row]);
      }
    }
    return index;
  }

  /** Whether scores are approximate: the index holds int8 codes alone (see `fromCodes`). */
  get approximate(): boolean {
    return this.#codesOnly;
  }

  /** How searches scan: `'int8-simd'` once vectors are held and WebAssembly SIMD is available. */
  get scan(): VectorScan {
    return this.#scanner ? 'int8-simd' : 'exact';
  }

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
    this.#checkWritable();
    for (const chunk of chunks) this.checkDimension(chunk.vector.length);
    this.removeDocument(docId);
    const first = chunks[0];
    if (!first) return;
    if (this.#dimension === undefined) {
      this.#dimension = first.vector.length;
      if (this.#wantsQuantised)
        this.#scanner = Int8Scanner.create(Math.ceil(this.#dimension / 16) * 16);
    }
    const dimension = this.#dimension;
    this.#reserve(this.#keys.length + chunks.length);
    const rows: number[] = [];
    for (const chunk of chunks) {
      const row = this.#keys.length;
      this.#rows.set(chunk.vector, row * dimension);
      this.#quantise(row);
      this.#keys.push({ docId, index: chunk.index });
      rows.push(row);
    }
    this.#rowsByDoc.set(docId, rows);
  }

  /** Removes a document's rows; the last rows move into the gaps. */
  removeDocument(docId: string): void {
    this.#checkWritable();
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
        this.#moveCodes(last, row);
        this.#keys[row] = moved;
        const movedRows = this.#rowsByDoc.get(moved.docId) ?? [];
        movedRows[movedRows.indexOf(last)] = row;
      }
      this.#keys.pop();
    }
  }

  #checkWritable(): void {
    if (this.#codesOnly)
      throw new Error('An index of int8 codes alone is read only: build one from the floats.');
  }

  /** The `k` rows most similar to `query` scoring at least `minScore`, best first. */
  search(query: Float32Array, k: number, minScore: number): ScoredKey[] {
    if (this.#keys.length === 0 || k <= 0) return [];
    this.checkDimension(query.length);
    const candidates = Math.max(MIN_CANDIDATES, k * CANDIDATES_PER_RESULT);
    const scanner = this.#scanner;
    const found =
      scanner && this.#codesOnly
        ? this.#codeScores(this.#candidates(scanner, query, k), k, minScore)
        : scanner && this.#keys.length > candidates
          ? this.#rescore(query, this.#candidates(scanner, query, candidates).rows, k, minScore)
          : this.#exactSearch(query, k, minScore);
    return found.rows.map((row, i) => ({
      ...(this.#keys[row] as ChunkKey),
      score: found.scores[i] as number,
    }));
  }

  /** Every row's exact score; the best `k` kept sorted (small k: insertion beats a heap). */
  #exactSearch(query: Float32Array, k: number, minScore: number): Found {
    const dimension = this.#dimension as number;
    const bestRows: number[] = [];
    const bestScores: number[] = [];
    let floor = minScore;
    for (let row = 0; row < this.#keys.length; row++) {
      const score = this.#exactScore(query, row * dimension, dimension);
      // Written so that a NaN or infinite score (a hostile stored vector) is never kept.
      if (!(score >= floor && score < Infinity)) continue;
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
    return { rows: bestRows, scores: bestScores };
  }

  #exactScore(query: Float32Array, offset: number, dimension: number): number {
    const rows = this.#rows;
    let score = 0;
    for (let i = 0; i < dimension; i++)
      score += (rows[offset + i] as number) * (query[i] as number);
    return score;
  }

  /**
   * The `count` rows of highest int8 score, in no order (a min-heap of the best so far),
   * with their scores from the codes.
   */
  #candidates(
    scanner: Int8Scanner,
    query: Float32Array,
    count: number,
  ): { rows: Int32Array; scores: Float64Array } {
    const queryScale = writeCodes(
      query,
      0,
      query.length,
      scanner.codes,
      scanner.offset(-1),
      scanner.stride,
    );
    const dots = scanner.scan(this.#keys.length);
    const scales = this.#scales;
    const heapScores = new Float64Array(count);
    const heapRows = new Int32Array(count);
    let size = 0;
    for (let row = 0; row < dots.length; row++) {
      const score = (dots[row] as number) * (scales[row] as number);
      // A row of non-finite values has no scale (see `writeCodes`): never a candidate.
      if (Number.isNaN(score)) continue;
      if (size < count) {
        // Sift up.
        let at = size++;
        while (at > 0) {
          const parent = (at - 1) >> 1;
          if ((heapScores[parent] as number) <= score) break;
          heapScores[at] = heapScores[parent] as number;
          heapRows[at] = heapRows[parent] as number;
          at = parent;
        }
        heapScores[at] = score;
        heapRows[at] = row;
      } else if (score > (heapScores[0] as number)) {
        // Replace the worst and sift down.
        let at = 0;
        for (;;) {
          let child = 2 * at + 1;
          if (child >= count) break;
          if (
            child + 1 < count &&
            (heapScores[child + 1] as number) < (heapScores[child] as number)
          )
            child += 1;
          if ((heapScores[child] as number) >= score) break;
          heapScores[at] = heapScores[child] as number;
          heapRows[at] = heapRows[child] as number;
          at = child;
        }
        heapScores[at] = score;
        heapRows[at] = row;
      }
    }
    for (let i = 0; i < size; i++) heapScores[i] = (heapScores[i] as number) * queryScale;
    return { rows: heapRows.subarray(0, size), scores: heapScores.subarray(0, size) };
  }

  /** The candidates' scores from their codes, at least `minScore`, best first (ties: lower row first). */
  #codeScores(
    candidates: { rows: Int32Array; scores: Float64Array },
    k: number,
    minScore: number,
  ): Found {
    const scored: { row: number; score: number }[] = [];
    candidates.rows.forEach((row, i) => {
      const score = candidates.scores[i] as number;
      if (score >= minScore && score < Infinity) scored.push({ row, score });
    });
    return best(scored, k);
  }

  /** The candidates' exact scores, at least `minScore`, best first (ties: lower row first, as the exact scan). */
  #rescore(query: Float32Array, candidates: Int32Array, k: number, minScore: number): Found {
    const dimension = this.#dimension as number;
    const scored: { row: number; score: number }[] = [];
    for (const row of candidates) {
      const score = this.#exactScore(query, row * dimension, dimension);
      if (score >= minScore && score < Infinity) scored.push({ row, score });
    }
    return best(scored, k);
  }

  /** Writes row `row`'s int8 codes and scale from its float vector. */
  #quantise(row: number): void {
    const scanner = this.#scanner;
    if (!scanner) return;
    const dimension = this.#dimension as number;
    const { codes, stride } = scanner;
    this.#scales[row] = writeCodes(
      this.#rows,
      row * dimension,
      dimension,
      codes,
      scanner.offset(row),
      stride,
    );
  }

  #moveCodes(from: number, to: number): void {
    const scanner = this.#scanner;
    if (!scanner) return;
    const { codes, stride } = scanner;
    codes.copyWithin(scanner.offset(to), scanner.offset(from), scanner.offset(from) + stride);
    this.#scales[to] = this.#scales[from] as number;
  }

  /** Makes room for `count` rows in all, so that a load of known size grows the buffers once. */
  reserve(count: number): void {
    this.#reservedRows = Math.max(this.#reservedRows, count);
  }

  /** Grows the row buffer (doubling, or to the reserved size) to hold `count` rows. */
  #reserve(count: number): void {
    const dimension = this.#dimension ?? 0;
    if (count * dimension <= this.#rows.length) return;
    const grown = new Float32Array(
      Math.max(count, this.#reservedRows, this.#keys.length * 2, 64) * dimension,
    );
    grown.set(this.#rows.subarray(0, this.#keys.length * dimension));
    this.#rows = grown;
    const rows = grown.length / Math.max(dimension, 1);
    const scales = new Float32Array(rows);
    scales.set(this.#scales.subarray(0, this.#keys.length));
    this.#scales = scales;
    this.#scanner?.reserve(rows);
  }
}

/** Rows chosen by a search and their scores, best first. */
interface Found {
  readonly rows: readonly number[];
  readonly scores: readonly number[];
}

/** The `k` best of `scored`, best first (ties: lower row first, as the exact scan). */
function best(scored: { row: number; score: number }[], k: number): Found {
  scored.sort((a, b) => b.score - a.score || a.row - b.row);
  const kept = scored.slice(0, k);
  return { rows: kept.map((hit) => hit.row), scores: kept.map((hit) => hit.score) };
}

export { toUnitVector } from './unit-vector';
