import { AirlockError } from '../errors/airlock-error';
import { blockVectors, parseVectorBlock } from '../memory/vector-blocks';
import type { KnowledgeDocumentRecord } from '../protocol/knowledge';

/** A chunk's vector as the index takes it. */
interface IndexedChunk {
  readonly index: number;
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
  const known = new Map(documents.map((document) => [document.id, document]));
  const byDocument = new Map<string, IndexedChunk[]>();
  const seen = new Set<string>();
  const problems: AirlockError[] = [];
  for (const row of rows) {
    const id = typeof row === 'object' && row !== null ? (row as { id?: unknown }).id : undefined;
    const parsed = parseVectorBlock(row);
    if ('problem' in parsed) {
      problems.push(
        storedVectorsError(
          `A stored block of knowledge vectors (id ${String(id)}) is not valid and was left out: ${parsed.problem}.`,
          { id, problems: [parsed.problem] },
        ),
      );
      continue;
    }
    const strays: string[] = [];
    for (const entry of blockVectors(parsed.block)) {
      const document = known.get(entry.docId);
      const key = `${entry.index} ${entry.docId}`;
      const stray = !document
        ? `document "${entry.docId}" is not stored`
        : entry.index >= document.chunkCount
          ? `document "${entry.docId}" has no chunk ${entry.index}`
          : entry.vector.length !== document.dimension
            ? `chunk ${entry.index} of "${entry.docId}" has ${entry.vector.length} dimensions, not ${document.dimension}`
            : seen.has(key)
              ? `chunk ${entry.index} of "${entry.docId}" is stored twice`
              : undefined;
      if (stray) {
        strays.push(stray);
        continue;
      }
      seen.add(key);
      const chunks = byDocument.get(entry.docId) ?? [];
      chunks.push({ index: entry.index, vector: entry.vector });
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
