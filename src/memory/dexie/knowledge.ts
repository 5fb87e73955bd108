import type { KnowledgeChunkRecord } from '../../protocol/knowledge';
import type { ConversationStore } from '../store';
import { invalidInput } from '../store-failures';
import {
  blockVectors,
  codesOfBlock,
  packVectorBlock,
  packVectorBlocks,
  parseVectorBlock,
  VECTOR_BLOCK_SIZE,
  type VectorBlockRecord,
} from '../vector-blocks';
import type { DexieConnection } from './database';

/** How many blocks under half full are merged together. */
const MERGE_AT = 8;

/**
 * Knowledge documents, their chunks' text, and their vectors packed in blocks; a document,
 * its chunks and its vectors are replaced and removed together, in one transaction.
 */
export function knowledgeTables(
  connection: DexieConnection,
): Pick<
  ConversationStore,
  | 'putDocument'
  | 'deleteDocument'
  | 'listDocuments'
  | 'listVectorBlocks'
  | 'listVectorCodes'
  | 'getChunks'
> {
  const { db, guard, notify } = connection;
  const { documents, chunks, vectorBlocks, vectorCodes } = db;
  const knowledgeTables = [documents, chunks, vectorBlocks, vectorCodes];

  /** Stores a block (as `id`, or under a new id), with its int8 copy under the same id. */
  async function putBlock(block: VectorBlockRecord, id?: number): Promise<void> {
    const stored = await vectorBlocks.put(id === undefined ? block : { ...block, id });
    await vectorCodes.put(codesOfBlock(stored, block));
  }

  /** Deletes blocks and their int8 copies. */
  async function deleteBlocks(ids: number[]): Promise<void> {
    await vectorBlocks.bulkDelete(ids);
    await vectorCodes.bulkDelete(ids);
  }

  function chunkRange(docId: string) {
    return chunks.where('[docId+index]').between([docId, 0], [docId, Infinity]);
  }

  /**
   * Takes a document's vectors out of the blocks holding them; an emptied block is deleted.
   * A block that is not valid is left as it is (its other vectors are not this code's to drop).
   */
  async function removeVectors(docId: string): Promise<void> {
    for (const row of await vectorBlocks.where('docIds').equals(docId).toArray()) {
      const parsed = parseVectorBlock(row);
      if (!('block' in parsed) || row.id === undefined) continue;
      const kept = blockVectors(parsed.block).filter((entry) => entry.docId !== docId);
      if (kept.length === 0) await deleteBlocks([row.id]);
      else await putBlock(packVectorBlock(parsed.block.dimension, kept), row.id);
    }
  }

  /**
   * Writes vectors in new blocks of their own: filling a block that has room would rewrite
   * its vectors on every add (ten times over for documents of 50 chunks). Small blocks are
   * merged instead, once there are `MERGE_AT` of them (see `mergeSmallBlocks`).
   */
  async function addVectors(added: readonly KnowledgeChunkRecord[]): Promise<void> {
    const dimension = added[0]?.vector.length ?? 0;
    for (let start = 0; start < added.length; start += VECTOR_BLOCK_SIZE)
      await putBlock(packVectorBlock(dimension, added.slice(start, start + VECTOR_BLOCK_SIZE)));
  }

  /**
   * Repacks the blocks under half full once there are `MERGE_AT` of them, so the index
   * reads at most about twice the ideal number of rows, and each vector is rewritten about
   * once or twice in its life. Invalid blocks are left as they are.
   */
  async function mergeSmallBlocks(): Promise<void> {
    const small = vectorBlocks.where('count').below(VECTOR_BLOCK_SIZE / 2);
    // Counted on the index alone: most adds stop here without reading a vector.
    if ((await small.count()) < MERGE_AT) return;
    const valid = (await small.toArray()).flatMap((row) => {
      const parsed = parseVectorBlock(row);
      return 'block' in parsed && row.id !== undefined ? [{ id: row.id, block: parsed.block }] : [];
    });
    if (valid.length < 2) return;
    await deleteBlocks(valid.map((entry) => entry.id));
    for (const block of packVectorBlocks(valid.flatMap((entry) => blockVectors(entry.block))))
      await putBlock(block);
  }

  return {
    putDocument: (document, added) =>
      guard('storing a document', async () => {
        if (added.some((chunk) => chunk.docId !== document.id))
          throw invalidInput(`A chunk does not belong to document "${document.id}".`);
        if (added.some((chunk) => chunk.vector.length !== added[0]?.vector.length))
          throw invalidInput(`The chunks of document "${document.id}" differ in dimension.`);
        // Delete and add in one transaction: a failure part-way aborts it, old chunks intact.
        await db.transaction('rw', knowledgeTables, async () => {
          await chunkRange(document.id).delete();
          await removeVectors(document.id);
          await chunks.bulkAdd(added.map(({ docId, index, text }) => ({ docId, index, text })));
          await addVectors(added);
          await mergeSmallBlocks();
          await documents.put(document);
        });
        notify({ table: 'documents' }, { table: 'chunks' });
      }),

    deleteDocument: (id) =>
      guard('deleting a document', async () => {
        const existed = await db.transaction('rw', knowledgeTables, async () => {
          const existing = await documents.get(id);
          await chunkRange(id).delete();
          await removeVectors(id);
          await mergeSmallBlocks();
          await documents.delete(id);
          return existing !== undefined;
        });
        if (existed) notify({ table: 'documents' }, { table: 'chunks' });
        return existed;
      }),

    listDocuments: () =>
      guard('listing documents', () => documents.orderBy('addedAt').reverse().toArray()),

    // One read of few rows; the caller checks each (a trust boundary).
    listVectorBlocks: ({ after, limit } = {}) =>
      guard('reading knowledge vectors', () => {
        const blocks =
          after === undefined ? vectorBlocks.orderBy('id') : vectorBlocks.where('id').above(after);
        return (limit === undefined ? blocks : blocks.limit(limit)).toArray();
      }),

    listVectorCodes: () => guard('reading knowledge vector codes', () => vectorCodes.toArray()),

    getChunks: (keys) =>
      guard('reading chunks', () => chunks.bulkGet(keys.map(([docId, index]) => [docId, index]))),
  };
}
