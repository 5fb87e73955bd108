import type { KnowledgeChunkRecord } from '../../protocol/knowledge';
import type { ConversationStore } from '../store';
import { invalidInput } from '../store-failures';
import type { DexieConnection } from './database';

/** Knowledge documents and their chunks (text and vector), replaced and removed together. */
export function knowledgeTables(
  connection: DexieConnection,
): Pick<
  ConversationStore,
  'putDocument' | 'deleteDocument' | 'listDocuments' | 'listChunkVectors' | 'getChunks'
> {
  const { db, guard, notify } = connection;
  const { documents, chunks } = db;

  function chunkRange(docId: string) {
    return chunks.where('[docId+index]').between([docId, 0], [docId, Infinity]);
  }

  return {
    putDocument: (document, added) =>
      guard('storing a document', async () => {
        if (added.some((chunk) => chunk.docId !== document.id))
          throw invalidInput(`A chunk does not belong to document "${document.id}".`);
        // Delete and add in one transaction: a failure part-way aborts it, old chunks intact.
        await db.transaction('rw', [documents, chunks], async () => {
          await chunkRange(document.id).delete();
          await chunks.bulkAdd([...added]);
          await documents.put(document);
        });
        notify({ table: 'documents' }, { table: 'chunks' });
      }),

    deleteDocument: (id) =>
      guard('deleting a document', async () => {
        const existed = await db.transaction('rw', [documents, chunks], async () => {
          const existing = await documents.get(id);
          await chunkRange(id).delete();
          await documents.delete(id);
          return existing !== undefined;
        });
        if (existed) notify({ table: 'documents' }, { table: 'chunks' });
        return existed;
      }),

    listDocuments: () =>
      guard('listing documents', () => documents.orderBy('addedAt').reverse().toArray()),

    listChunkVectors: () =>
      guard('reading chunk vectors', async () => {
        const found: Pick<KnowledgeChunkRecord, 'docId' | 'index' | 'vector'>[] = [];
        // Rows read back are checked: a vector that is not a Float32Array would poison every search.
        await chunks.each((row) => {
          if (row.vector instanceof Float32Array)
            found.push({ docId: row.docId, index: row.index, vector: row.vector });
        });
        return found;
      }),

    getChunks: (keys) =>
      guard('reading chunks', () => chunks.bulkGet(keys.map(([docId, index]) => [docId, index]))),
  };
}
