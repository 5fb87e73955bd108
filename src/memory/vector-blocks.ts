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
  if (typeof row !== 'object' || row === null) return { problem: 'it is not an object' };
  const { dimension, count, docIds, indexes, vectors } = row as Partial<
    Record<keyof VectorBlockRecord, unknown>
  >;
  if (!Number.isInteger(dimension) || (dimension as number) < 1)
    return { problem: 'its dimension is not a positive integer' };
  if ((dimension as number) > MAX_VECTOR_DIMENSION)
    return { problem: `its dimension exceeds ${MAX_VECTOR_DIMENSION}` };
  if (!Number.isInteger(count) || (count as number) < 0 || (count as number) > VECTOR_BLOCK_SIZE)
    return { problem: `its count is not an integer from 0 to ${VECTOR_BLOCK_SIZE}` };
  if (
    !Array.isArray(docIds) ||
    docIds.length !== count ||
    docIds.some((id) => typeof id !== 'string')
  )
    return { problem: 'its docIds are not one string per vector' };
  if (
    !Array.isArray(indexes) ||
    indexes.length !== count ||
    indexes.some((index) => !Number.isInteger(index) || index < 0)
  )
    return { problem: 'its indexes are not one non-negative integer per vector' };
  if (!(vectors instanceof ArrayBuffer)) return { problem: 'its vectors are not an ArrayBuffer' };
  const expected = (count as number) * (dimension as number) * 4;
  if (vectors.byteLength !== expected)
    return {
      problem: `its vectors hold ${vectors.byteLength} bytes, not the ${expected} of ${count} × ${dimension} float32s`,
    };
  return { block: row as VectorBlockRecord };
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
