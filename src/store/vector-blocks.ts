import { writeCodes } from './int8-codes';

/**
 * Knowledge vectors as stored: packed in blocks of up to `VECTOR_BLOCK_SIZE`, each one row
 * holding its vectors in one `ArrayBuffer`, so a new agent worker reads 50 rows for 50,000
 * chunks instead of 50,000. A block may hold chunks of several documents; each vector's
 * document and position are listed beside it.
 */

/** Vectors per block at most. */
export const VECTOR_BLOCK_SIZE = 1_000;

/** Longest vector a block may hold (the largest embedding models give 4,096). */
export const MAX_VECTOR_DIMENSION = 16_384;

/** One stored block of vectors. */
export interface VectorBlockRecord {
  /** Auto-incremented by the store. */
  readonly id?: number;
  readonly dimension: number;
  /** How many vectors it holds (indexed: small blocks, to merge, are found by it). */
  readonly count: number;
  /** Per vector, its document (a multi-entry index finds a document's blocks). */
  readonly docIds: readonly string[];
  /** Per vector, its chunk's position in the document. */
  readonly indexes: readonly number[];
  /** `count × dimension` float32s, vector after vector, each unit length. */
  readonly vectors: ArrayBuffer;
}

/** A chunk's vector on its way into, or out of, a block. */
export interface BlockVector {
  readonly docId: string;
  readonly index: number;
  readonly vector: Float32Array;
}

/**
 * The block if `row` has a block's shape, else what is wrong with it (a row read back from
 * IndexedDB may have been written by another version, or by other code of the origin).
 */
export function parseVectorBlock(
  row: unknown,
): { readonly block: VectorBlockRecord } | { readonly problem: string } {
  const problem = headerProblem(row);
  if (problem !== undefined) return { problem };
  const { dimension, count, vectors } = row as VectorBlockRecord;
  if (!(vectors instanceof ArrayBuffer)) return { problem: 'its vectors are not an ArrayBuffer' };
  const expected = count * dimension * 4;
  if (vectors.byteLength !== expected)
    return {
      problem: `its vectors hold ${vectors.byteLength} bytes, not the ${expected} of ${count} × ${dimension} float32s`,
    };
  return { block: row as VectorBlockRecord };
}

/** What is wrong with the fields a block and its codes share, if anything. */
export function headerProblem(row: unknown): string | undefined {
  if (typeof row !== 'object' || row === null) return 'it is not an object';
  const { dimension, count, docIds, indexes } = row as Partial<
    Record<keyof VectorBlockRecord, unknown>
  >;
  if (!Number.isInteger(dimension) || (dimension as number) < 1)
    return 'its dimension is not a positive integer';
  if ((dimension as number) > MAX_VECTOR_DIMENSION)
    return `its dimension exceeds ${MAX_VECTOR_DIMENSION}`;
  if (!Number.isInteger(count) || (count as number) < 0 || (count as number) > VECTOR_BLOCK_SIZE)
    return `its count is not an integer from 0 to ${VECTOR_BLOCK_SIZE}`;
  if (
    !Array.isArray(docIds) ||
    docIds.length !== count ||
    docIds.some((id) => typeof id !== 'string')
  )
    return 'its docIds are not one string per vector';
  if (
    !Array.isArray(indexes) ||
    indexes.length !== count ||
    indexes.some((index) => !Number.isInteger(index) || index < 0)
  )
    return 'its indexes are not one non-negative integer per vector';
  return undefined;
}

/** The block's vectors, as views on its buffer. */
export function blockVectors(block: VectorBlockRecord): BlockVector[] {
  const { dimension } = block;
  return block.docIds.map((docId, i) => ({
    docId,
    index: block.indexes[i] as number,
    vector: new Float32Array(block.vectors, i * dimension * 4, dimension),
  }));
}

/** A block of these vectors (all of `dimension`), without an id. */
export function packVectorBlock(
  dimension: number,
  entries: readonly BlockVector[],
): VectorBlockRecord {
  const packed = new Float32Array(entries.length * dimension);
  entries.forEach((entry, i) => {
    packed.set(entry.vector, i * dimension);
  });
  return {
    dimension,
    count: entries.length,
    docIds: entries.map((entry) => entry.docId),
    indexes: entries.map((entry) => entry.index),
    vectors: packed.buffer,
  };
}

/** Packs vectors in blocks of `VECTOR_BLOCK_SIZE`, one dimension per block, in the order given. */
export function packVectorBlocks(entries: readonly BlockVector[]): VectorBlockRecord[] {
  const byDimension = new Map<number, BlockVector[]>();
  for (const entry of entries) {
    const group = byDimension.get(entry.vector.length) ?? [];
    group.push(entry);
    byDimension.set(entry.vector.length, group);
  }
  const blocks: VectorBlockRecord[] = [];
  for (const [dimension, group] of byDimension)
    for (let start = 0; start < group.length; start += VECTOR_BLOCK_SIZE)
      blocks.push(packVectorBlock(dimension, group.slice(start, start + VECTOR_BLOCK_SIZE)));
  return blocks;
}

/**
 * The int8 copy of one block (see `int8-codes.ts`), stored under the block's id: a new agent
 * worker reads these, a quarter of the bytes, and searches with them while it reads the
 * floats. A copy only: the floats stay what the index is finally built from.
 */
export interface VectorCodesRecord extends Omit<VectorBlockRecord, 'id' | 'vectors'> {
  /** The id of the block it copies. */
  readonly id: number;
  /** `count × dimension` int8 codes, vector after vector. */
  readonly codes: ArrayBuffer;
  /** `count` float32s: per vector, the float value of one int8 step (NaN: no codes). */
  readonly scales: ArrayBuffer;
}

/** The int8 copy of `block`, stored as `id`. */
export function codesOfBlock(id: number, block: VectorBlockRecord): VectorCodesRecord {
  const { dimension, count, docIds, indexes } = block;
  const floats = new Float32Array(block.vectors);
  const codes = new Int8Array(count * dimension);
  const scales = new Float32Array(count);
  for (let i = 0; i < count; i++)
    scales[i] = writeCodes(floats, i * dimension, dimension, codes, i * dimension, dimension);
  return { id, dimension, count, docIds, indexes, codes: codes.buffer, scales: scales.buffer };
}
