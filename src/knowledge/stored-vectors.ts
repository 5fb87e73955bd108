import { AirlockError } from '../errors/airlock-error';
import type { KnowledgeDocumentRecord } from '../protocol/knowledge';
import { headerProblem, parseVectorBlock, type VectorCodesRecord } from '../store/vector-blocks';

/** How many of a block's stray vectors an error names. */
const NAMED_STRAYS = 3;

/** The error reporting stored vectors that were left out of the index. */
export function storedVectorsError(
  message: string,
  details: Readonly<Record<string, unknown>>,
): AirlockError {
  return new AirlockError('storage-failed', message, {
    details: { table: 'vectorBlocks', ...details },
  });
}

/** A stored vector on its way into the index. */
interface IndexedChunk {
  readonly docId: string;
  readonly index: number;
  readonly vector: Float32Array;
}

/**
 * The vectors of stored blocks, by document, each document's in chunk order. A block that
 * is not valid is left out whole; a vector naming a document that is not stored, a position
 * past the document's chunks, another length than the document's, or a chunk already seen,
 * is left out alone. Each block with something left out gives one `storage-failed` error.
 */
export function readVectorBlocks(
  rows: readonly unknown[],
  documents: readonly KnowledgeDocumentRecord[],
): { byDocument: Map<string, IndexedChunk[]>; count: number; problems: AirlockError[] } {
  const byDocument = new Map<string, IndexedChunk[]>();
  const parse = (row: unknown) => {
    const parsed = parseVectorBlock(row);
    return 'block' in parsed ? { row: parsed.block } : parsed;
  };
  const { count, problems } = checkStoredRows(rows, documents, parse, (block, at) => {
    const docId = block.docIds[at] as string;
    const chunks = byDocument.get(docId) ?? [];
    const { dimension } = block;
    chunks.push({
      docId,
      index: block.indexes[at] as number,
      vector: new Float32Array(block.vectors, at * dimension * 4, dimension),
    });
    byDocument.set(docId, chunks);
  });
  for (const chunks of byDocument.values()) chunks.sort((a, b) => a.index - b.index);
  return { byDocument, count, problems };
}

/** The int8 copy of one stored block, and which of its vectors the index takes. */
export interface CodesBlock {
  readonly dimension: number;
  readonly docIds: readonly string[];
  readonly indexes: readonly number[];
  /** The block's codes, vector after vector. */
  readonly codes: Int8Array;
  /** Per vector, the float value of one int8 step. */
  readonly scales: Float32Array;
  /** The positions of the vectors kept, ascending. */
  readonly kept: number[];
}

/**
 * The int8 copies of stored blocks (see `VectorCodesRecord`), checked as `readVectorBlocks`
 * checks the blocks: what it would leave out of the index is left out. Kept block by block,
 * so the index can take a whole block's codes at once.
 */
export function readVectorCodes(
  rows: readonly unknown[],
  documents: readonly KnowledgeDocumentRecord[],
): { blocks: CodesBlock[]; count: number; problems: AirlockError[] } {
  const blocks: CodesBlock[] = [];
  let current: VectorCodesRecord | undefined;
  const { count, problems } = checkStoredRows(rows, documents, parseVectorCodes, (row, at) => {
    if (row !== current) {
      current = row;
      blocks.push({
        dimension: row.dimension,
        docIds: row.docIds,
        indexes: row.indexes,
        codes: new Int8Array(row.codes),
        scales: new Float32Array(row.scales),
        kept: [],
      });
    }
    blocks.at(-1)?.kept.push(at);
  });
  return { blocks, count, problems };
}

/** What `checkStoredRows` needs of a parsed row: per vector, its chunk, and the vectors' length. */
interface StoredVectors {
  readonly dimension: number;
  readonly count: number;
  readonly docIds: readonly string[];
  readonly indexes: readonly number[];
}

/**
 * The checks of `readVectorBlocks`, for rows `parse` reads: `keep` is called with each
 * vector that passes them (its row and position), in the order stored. Returns how many
 * were kept, and an error for each row with something left out.
 */
function checkStoredRows<Row extends StoredVectors>(
  rows: readonly unknown[],
  documents: readonly KnowledgeDocumentRecord[],
  parse: (row: unknown) => { readonly row: Row } | { readonly problem: string },
  keep: (row: Row, at: number) => void,
): { count: number; problems: AirlockError[] } {
  const known = new Map(documents.map((document) => [document.id, document]));
  /** Per document, the chunk positions already kept. */
  const seen = new Map<string, Set<number>>();
  const problems: AirlockError[] = [];
  let count = 0;
  for (const stored of rows) {
    const id =
      typeof stored === 'object' && stored !== null ? (stored as { id?: unknown }).id : undefined;
    const parsed = parse(stored);
    if ('problem' in parsed) {
      problems.push(
        storedVectorsError(
          `A stored block of knowledge vectors (id ${String(id)}) is not valid and was left out: ${parsed.problem}.`,
          { id, problems: [parsed.problem] },
        ),
      );
      continue;
    }
    const { row } = parsed;
    const strays: string[] = [];
    for (let at = 0; at < row.count; at++) {
      const docId = row.docIds[at] as string;
      const index = row.indexes[at] as number;
      const document = known.get(docId);
      const kept = seen.get(docId);
      const stray = !document
        ? `document "${docId}" is not stored`
        : index >= document.chunkCount
          ? `document "${docId}" has no chunk ${index}`
          : row.dimension !== document.dimension
            ? `chunk ${index} of "${docId}" has ${row.dimension} dimensions, not ${document.dimension}`
            : kept?.has(index)
              ? `chunk ${index} of "${docId}" is stored twice`
              : undefined;
      if (stray) {
        strays.push(stray);
        continue;
      }
      if (kept) kept.add(index);
      else seen.set(docId, new Set([index]));
      count += 1;
      keep(row, at);
    }
    if (strays.length > 0)
      problems.push(
        storedVectorsError(
          `A stored block of knowledge vectors (id ${String(id)}) holds ${strays.length} vector(s) that match no stored chunk, left out: ${strays.slice(0, NAMED_STRAYS).join('; ')}.`,
          { id, problems: strays.slice(0, NAMED_STRAYS), leftOut: strays.length },
        ),
      );
  }
  return { count, problems };
}

/**
 * The codes if `row` has their shape, checked as `parseVectorBlock` checks a block, else what
 * is wrong with it.
 */
function parseVectorCodes(
  row: unknown,
): { readonly row: VectorCodesRecord } | { readonly problem: string } {
  const problem = headerProblem(row);
  if (problem !== undefined) return { problem };
  const { id, dimension, count, codes, scales } = row as Partial<
    Record<keyof VectorCodesRecord, unknown>
  > &
    Pick<VectorCodesRecord, 'dimension' | 'count'>;
  if (!Number.isInteger(id)) return { problem: 'its id is not an integer' };
  if (!(codes instanceof ArrayBuffer) || codes.byteLength !== count * dimension)
    return { problem: 'its codes are not one byte per dimension of each vector' };
  if (!(scales instanceof ArrayBuffer) || scales.byteLength !== count * 4)
    return { problem: 'its scales are not one float32 per vector' };
  return { row: row as VectorCodesRecord };
}
