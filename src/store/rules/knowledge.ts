import type { KnowledgeChunkRecord } from '../../protocol/knowledge';
import type { ConversationStore } from '../store';
import { invalidInput } from '../store-failures';
import type { TableAdapter, Tables } from '../tables/table-adapter';
import { startingWith } from '../tables/table-adapter';
import {
  blockVectors,
  codesOfBlock,
  packVectorBlock,
  packVectorBlocks,
  parseVectorBlock,
  VECTOR_BLOCK_SIZE,
  type VectorBlockRecord,
} from '../vector-blocks';
import { where } from './ranges';

/** How many blocks under half full are merged together. */
const MERGE_AT = 8;

/**
 * Knowledge documents, their chunks' text, and their vectors packed in blocks; a document,
 * its chunks and its vectors are replaced and removed together, in one transaction.
 */
export function knowledgeRules(
  adapter: TableAdapter,
): Pick<
  ConversationStore,
  | 'putDocument'
  | 'deleteDocument'
  | 'listDocuments'
  | 'listVectorBlocks'
  | 'listVectorCodes'
  | 'getChunks'
> {
  const { guard, transaction, notify } = adapter;
  const KNOWLEDGE_TABLES = ['documents', 'chunks', 'vectorBlocks', 'vectorCodes'] as const;

  /** Stores a block (as `id`, or under a new id), with its int8 copy under the same id. */
  async function putBlock(tables: Tables, block: VectorBlockRecord, id?: number): Promise<void> {
    const stored = await tables.put('vectorBlocks', id === undefined ? block : { ...block, id });
    await tables.put('vectorCodes', codesOfBlock(stored as number, block));
  }

  /** Deletes blocks and their int8 copies. */
  function deleteBlocks(tables: Tables, ids: number[]): void {
    for (const id of ids) {
      void tables.delete('vectorBlocks', id);
      void tables.delete('vectorCodes', id);
    }
  }

  /**
   * Takes a document's vectors out of the blocks holding them; an emptied block is deleted.
   * A block that is not valid is left as it is (its other vectors are not this code's to drop).
   */
  async function removeVectors(tables: Tables, docId: string): Promise<void> {
    for (const row of await tables.getAll('vectorBlocks', where('docIds', docId))) {
      const parsed = parseVectorBlock(row);
      if (!('block' in parsed) || row.id === undefined) continue;
      const kept = blockVectors(parsed.block).filter((entry) => entry.docId !== docId);
      if (kept.length === 0) deleteBlocks(tables, [row.id]);
      else await putBlock(tables, packVectorBlock(parsed.block.dimension, kept), row.id);
    }
  }

  /**
   * Writes vectors in new blocks of their own: filling a block that has room would rewrite
   * its vectors on every add (ten times over for documents of 50 chunks). Small blocks are
   * merged instead, once there are `MERGE_AT` of them (see `mergeSmallBlocks`).
   */
  async function addVectors(tables: Tables, added: readonly KnowledgeChunkRecord[]): Promise<void> {
    const dimension = added[0]?.vector.length ?? 0;
    for (let start = 0; start < added.length; start += VECTOR_BLOCK_SIZE)
      await putBlock(
        tables,
        packVectorBlock(dimension, added.slice(start, start + VECTOR_BLOCK_SIZE)),
      );
  }

  /**
   * Repacks the blocks under half full once there are `MERGE_AT` of them, so the index
   * reads at most about twice the ideal number of rows, and each vector is rewritten about
   * once or twice in its life. Invalid blocks are left as they are.
   */
  async function mergeSmallBlocks(tables: Tables): Promise<void> {
    const small = {
      index: 'count',
      range: { upper: VECTOR_BLOCK_SIZE / 2, upperOpen: true },
    } as const;
    // Counted on the index alone: most adds stop here without reading a vector.
    if ((await tables.count('vectorBlocks', small)) < MERGE_AT) return;
    const valid = (await tables.getAll('vectorBlocks', small)).flatMap((row) => {
      const parsed = parseVectorBlock(row);
      return 'block' in parsed && row.id !== undefined ? [{ id: row.id, block: parsed.block }] : [];
    });
    if (valid.length < 2) return;
    deleteBlocks(
      tables,
      valid.map((entry) => entry.id),
    );
    for (const block of packVectorBlocks(valid.flatMap((entry) => blockVectors(entry.block))))
      await putBlock(tables, block);
  }

  return {
    putDocument: (document, added) =>
      guard('storing a document', async () => {
        if (added.some((chunk) => chunk.docId !== document.id))
          throw invalidInput(`A chunk does not belong to document "${document.id}".`);
        if (added.some((chunk) => chunk.vector.length !== added[0]?.vector.length))
          throw invalidInput(`The chunks of document "${document.id}" differ in dimension.`);
        // Delete and add in one transaction: a failure part-way aborts it, old chunks intact.
        await transaction('rw', KNOWLEDGE_TABLES, async (tables) => {
          await tables.deleteAll('chunks', { range: startingWith(document.id) });
          await removeVectors(tables, document.id);
          for (const { docId, index, text } of added)
            void tables.add('chunks', { docId, index, text });
          await addVectors(tables, added);
          await mergeSmallBlocks(tables);
          await tables.put('documents', document);
        });
        notify({ table: 'documents' }, { table: 'chunks' });
      }),

    deleteDocument: (id) =>
      guard('deleting a document', async () => {
        const existed = await transaction('rw', KNOWLEDGE_TABLES, async (tables) => {
          const existing = await tables.get('documents', id);
          await tables.deleteAll('chunks', { range: startingWith(id) });
          await removeVectors(tables, id);
          await mergeSmallBlocks(tables);
          await tables.delete('documents', id);
          return existing !== undefined;
        });
        if (existed) notify({ table: 'documents' }, { table: 'chunks' });
        return existed;
      }),

    listDocuments: () =>
      guard('listing documents', () =>
        transaction('r', ['documents'], (tables) =>
          tables.getAll('documents', { index: 'addedAt', reverse: true }),
        ),
      ),

    // One read of few rows; the caller checks each (a trust boundary).
    listVectorBlocks: ({ after, limit } = {}) =>
      guard('reading knowledge vectors', () =>
        transaction('r', ['vectorBlocks'], (tables) =>
          tables.getAll('vectorBlocks', {
            ...(after === undefined ? {} : { range: { lower: after, lowerOpen: true } }),
            ...(limit === undefined ? {} : { limit }),
          }),
        ),
      ),

    listVectorCodes: () =>
      guard('reading knowledge vector codes', () =>
        transaction('r', ['vectorCodes'], (tables) => tables.getAll('vectorCodes')),
      ),

    getChunks: (keys) =>
      guard('reading chunks', () =>
        transaction('r', ['chunks'], (tables) =>
          Promise.all(keys.map(([docId, index]) => tables.get('chunks', [docId, index]))),
        ),
      ),
  };
}
