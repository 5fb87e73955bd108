import { AirlockError } from '../errors/airlock-error';
import {
  blockVectors,
  headerProblem,
  parseVectorBlock,
  type VectorCodesRecord,
} from '../memory/vector-blocks';
import type { KnowledgeDocumentRecord } from '../protocol/knowledge';

/** A chunk's vector as the index takes it. */
interface IndexedChunk extends StoredEntry {
  readonly vector: Float32Array;
}

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

/** A stored vector (or its int8 copy) on its way into the index. */
interface StoredEntry {
  readonly docId: string;
  readonly index: number;
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
  return readStoredRows(
    rows,
    documents,
    (row) => {
      const parsed = parseVectorBlock(row);
      return 'block' in parsed ? blockVectors(parsed.block) : parsed;
    },
    (entry) => entry.vector.length,
  );
}

/**
 * The int8 copies of stored blocks (see `VectorCodesRecord`), by document, checked as
 * `readVectorBlocks` checks the blocks: what it would leave out of the index is left out.
 */
export function readVectorCodes(
  rows: readonly unknown[],
  documents: readonly KnowledgeDocumentRecord[],
): { byDocument: Map<string, CodedChunk[]>; count: number; problems: AirlockError[] } {
  return readStoredRows(
    rows,
    documents,
    (row) => {
      const parsed = parseVectorCodes(row);
      return 'codes' in parsed ? codedChunks(parsed.codes) : parsed;
    },
    (entry) => entry.codes.length,
  );
}

/** A chunk's int8 codes and scale, as views on its row's buffers. */
export interface CodedChunk extends StoredEntry {
  readonly codes: Int8Array;
  readonly scale: number;
}

function codedChunks(row: VectorCodesRecord): CodedChunk[] {
  const { dimension } = row;
  const scales = new Float32Array(row.scales);
  return row.docIds.map((docId, i) => ({
    docId,
    index: row.indexes[i] as number,
    codes: new Int8Array(row.codes, i * dimension, dimension),
    scale: scales[i] as number,
  }));
}

/** The checks of `readVectorBlocks`, for rows whose entries `entriesOf` gives. */
function readStoredRows<E extends StoredEntry>(
  rows: readonly unknown[],
  documents: readonly KnowledgeDocumentRecord[],
  entriesOf: (row: unknown) => E[] | { readonly problem: string },
  lengthOf: (entry: E) => number,
): { byDocument: Map<string, E[]>; count: number; problems: AirlockError[] } {
  const known = new Map(documents.map((document) => [document.id, document]));
  const byDocument = new Map<string, E[]>();
  const seen = new Set<string>();
  const problems: AirlockError[] = [];
  for (const row of rows) {
    const id = typeof row === 'object' && row !== null ? (row as { id?: unknown }).id : undefined;
    const entries = entriesOf(row);
    if ('problem' in entries) {
      problems.push(
        storedVectorsError(
          `A stored block of knowledge vectors (id ${String(id)}) is not valid and was left out: ${entries.problem}.`,
          { id, problems: [entries.problem] },
        ),
      );
      continue;
    }
    const strays: string[] = [];
    for (const entry of entries) {
      const document = known.get(entry.docId);
      const key = `${entry.index} ${entry.docId}`;
      const length = lengthOf(entry);
      const stray = !document
        ? `document "${entry.docId}" is not stored`
        : entry.index >= document.chunkCount
          ? `document "${entry.docId}" has no chunk ${entry.index}`
          : length !== document.dimension
            ? `chunk ${entry.index} of "${entry.docId}" has ${length} dimensions, not ${document.dimension}`
            : seen.has(key)
              ? `chunk ${entry.index} of "${entry.docId}" is stored twice`
              : undefined;
      if (stray) {
        strays.push(stray);
        continue;
      }
      seen.add(key);
      const chunks = byDocument.get(entry.docId) ?? [];
      chunks.push(entry);
      byDocument.set(entry.docId, chunks);
    }
    if (strays.length > 0)
      problems.push(
        storedVectorsError(
          `A stored block of knowledge vectors (id ${String(id)}) holds ${strays.length} vector(s) that match no stored chunk, left out: ${strays.slice(0, NAMED_STRAYS).join('; ')}.`,
          { id, problems: strays.slice(0, NAMED_STRAYS), leftOut: strays.length },
        ),
      );
  }
  for (const chunks of byDocument.values()) chunks.sort((a, b) => a.index - b.index);
  return { byDocument, count: seen.size, problems };
}

/**
 * The codes if `row` has their shape, checked as `parseVectorBlock` checks a block, else what
 * is wrong with it.
 */
function parseVectorCodes(
  row: unknown,
): { readonly codes: VectorCodesRecord } | { readonly problem: string } {
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
  return { codes: row as VectorCodesRecord };
}
