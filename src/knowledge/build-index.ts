import type { AirlockError } from '../errors/airlock-error';
import { isAirlockError } from '../errors/airlock-error';
import type { KnowledgeDocumentRecord } from '../protocol/knowledge';
import { readVectorBlocks, readVectorCodes, storedVectorsError } from './stored-vectors';
import { VectorIndex } from './vector-index';

/**
 * The in-worker index of the stored vector blocks, and what had to be left out of it
 * (`storage-failed` errors). Loaded with a dynamic import: only agents that use knowledge
 * carry the index and its WebAssembly scan.
 */
export function buildIndex(
  blocks: readonly unknown[],
  documents: readonly KnowledgeDocumentRecord[],
): { vectors: VectorIndex; problems: AirlockError[] } {
  const { byDocument, count, problems } = readVectorBlocks(blocks, documents);
  const vectors = new VectorIndex();
  vectors.reserve(count);
  for (const [docId, chunks] of byDocument) {
    try {
      vectors.setDocument(docId, chunks);
    } catch (error) {
      if (!isAirlockError(error, 'knowledge-dimension-mismatch')) throw error;
      problems.push(
        storedVectorsError(
          `The stored vectors of document "${docId}" have another length than the others and were left out: ${error.message}`,
          { docId },
        ),
      );
    }
  }
  return { vectors, problems };
}

/**
 * An index of the stored int8 copies alone (see `VectorIndex.fromCodes`), or undefined when
 * there is none to build: no copies, copies of several lengths, or no WebAssembly SIMD. What
 * is wrong with the copies is not reported: the index built from the blocks reports the
 * blocks, which are what counts.
 */
export function buildCodesIndex(
  rows: readonly unknown[],
  documents: readonly KnowledgeDocumentRecord[],
): VectorIndex | undefined {
  const { blocks, count } = readVectorCodes(rows, documents);
  const dimensions = new Set(blocks.map((block) => block.dimension));
  const [dimension] = dimensions;
  if (count === 0 || dimensions.size !== 1 || dimension === undefined) return undefined;
  return VectorIndex.fromCodes(dimension, blocks, count);
}
