import Dexie from 'dexie';
import { IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { KnowledgeBase } from '../../../src/knowledge/knowledge-base';
import type { EmbeddingModel } from '../../../src/model/embedding-model';
import {
  DEFAULT_KNOWLEDGE_CONFIG,
  type KnowledgeChunkRecord,
  type KnowledgeDocumentRecord,
} from '../../../src/protocol/knowledge';
import type { ConversationStore } from '../../../src/store/store';
import {
  blockVectors,
  parseVectorBlock,
  type VectorBlockRecord,
} from '../../../src/store/vector-blocks';
import { freshStore } from '../store/store-fixture';

const DIMENSION = 8;
const signal = new AbortController().signal;

/** Chunk `index` of document number `doc` points along its own axis pair: easy to find. */
function vectorOf(doc: number, index: number): Float32Array {
  const vector = new Float32Array(DIMENSION);
  vector[doc % DIMENSION] = 1;
  vector[(doc + 1 + (index % (DIMENSION - 1))) % DIMENSION] = 0.001 * (index + 1);
  const length = Math.hypot(...vector);
  return vector.map((value) => value / length);
}

function documentOf(doc: number, chunkCount: number): KnowledgeDocumentRecord {
  return {
    id: `d${doc}`,
    title: `Doc ${doc}`,
    chunkCount,
    chars: chunkCount,
    embeddingModel: 'axes',
    dimension: DIMENSION,
    addedAt: doc,
  };
}

function chunksOf(doc: number, chunkCount: number): KnowledgeChunkRecord[] {
  return Array.from({ length: chunkCount }, (_, index) => ({
    docId: `d${doc}`,
    index,
    text: `doc ${doc} chunk ${index}`,
    vector: vectorOf(doc, index),
  }));
}

async function blocks(store: ConversationStore): Promise<VectorBlockRecord[]> {
  return (await store.listVectorBlocks()).map((row) => {
    const parsed = parseVectorBlock(row);
    if (!('block' in parsed)) throw new Error(parsed.problem);
    return parsed.block;
  });
}

/** The query for document `doc`: its axis. */
const axisEmbedder: EmbeddingModel = {
  name: 'axes',
  embed: async (texts) =>
    texts.map((text) => {
      const vector = Array.from({ length: DIMENSION }, () => 0);
      vector[Number(/\d+/.exec(text)?.[0] ?? 0) % DIMENSION] = 1;
      return vector;
    }),
};

describe('knowledge vectors in packed blocks', () => {
  it('packs 2,500 vectors of three documents in blocks of at most 1,000, each document in blocks of its own', async () => {
    const { store } = freshStore();
    await store.putDocument(documentOf(1, 1_200), chunksOf(1, 1_200));
    await store.putDocument(documentOf(2, 800), chunksOf(2, 800));
    await store.putDocument(documentOf(3, 500), chunksOf(3, 500));
    const stored = await blocks(store);
    expect(stored.map((block) => block.count).sort((a, b) => b - a)).toEqual([
      1_000, 800, 500, 200,
    ]);
    const vectors = stored.flatMap(blockVectors);
    expect(vectors).toHaveLength(2_500);
    const second = vectors.find((entry) => entry.docId === 'd2' && entry.index === 799);
    expect(second?.vector).toEqual(vectorOf(2, 799));
    // Chunk rows keep their text only.
    const [chunk] = await store.getChunks([['d1', 5]]);
    expect(chunk).toEqual({ docId: 'd1', index: 5, text: 'doc 1 chunk 5' });
  });

  it('merges small blocks once there are eight, keeping every vector', async () => {
    const { store } = freshStore();
    for (let doc = 0; doc < 30; doc++)
      await store.putDocument(documentOf(doc, 10), chunksOf(doc, 10));
    let stored = await blocks(store);
    expect(stored.length).toBeLessThan(8);
    expect(stored.reduce((sum, block) => sum + block.count, 0)).toBe(300);
    const keys = stored.flatMap(blockVectors).map((entry) => `${entry.docId}#${entry.index}`);
    expect(new Set(keys).size).toBe(300);
    for (let doc = 0; doc < 30; doc += 2) await store.deleteDocument(`d${doc}`);
    stored = await blocks(store);
    expect(stored.length).toBeLessThan(8);
    expect(stored.flatMap(blockVectors).map((entry) => entry.docId)).not.toContain('d0');
    expect(stored.reduce((sum, block) => sum + block.count, 0)).toBe(150);
    const knowledge = new KnowledgeBase(store, axisEmbedder, {
      ...DEFAULT_KNOWLEDGE_CONFIG,
      minScore: 0,
    });
    // Documents 3, 11, 19 and 27 share the axis of "doc 3"; the even ones are gone.
    const hits = await knowledge.search('doc 3', { signal, k: 40 });
    expect(new Set(hits.filter((hit) => hit.score > 0.9).map((hit) => hit.docId))).toEqual(
      new Set(['d3', 'd11', 'd19', 'd27']),
    );
  });

  it('takes a removed or replaced document out of the blocks it shared, and deletes emptied blocks', async () => {
    const { store } = freshStore();
    await store.putDocument(documentOf(1, 1_200), chunksOf(1, 1_200));
    await store.putDocument(documentOf(2, 800), chunksOf(2, 800));
    await store.deleteDocument('d2');
    let stored = await blocks(store);
    expect(stored.flatMap((block) => block.docIds).every((id) => id === 'd1')).toBe(true);
    expect(stored.reduce((sum, block) => sum + block.count, 0)).toBe(1_200);

    await store.putDocument(documentOf(1, 10), chunksOf(1, 10));
    stored = await blocks(store);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.indexes).toEqual(Array.from({ length: 10 }, (_, i) => i));

    const knowledge = new KnowledgeBase(store, axisEmbedder, {
      ...DEFAULT_KNOWLEDGE_CONFIG,
      minScore: 0,
    });
    const hits = await knowledge.search('doc 1', { signal, k: 3 });
    expect(hits.map((hit) => [hit.docId, hit.chunkIndex])).toEqual([
      ['d1', 0],
      ['d1', 1],
      ['d1', 2],
    ]);
    expect(await knowledge.storageErrors()).toEqual([]);
  });

  it('leaves hostile block rows out of the index with a storage-failed error each, and searches the rest', async () => {
    const fixture = freshStore();
    await fixture.store.putDocument(documentOf(1, 3), chunksOf(1, 3));
    await fixture.store.putDocument(documentOf(2, 3), chunksOf(2, 3));
    const raw = new Dexie(fixture.name, {
      indexedDB: fixture.indexedDB as IDBFactory,
      IDBKeyRange,
    });
    await raw.open();
    const table = raw.table('vectorBlocks');
    const good = new Float32Array(DIMENSION * 2);
    good.set(vectorOf(3, 0));
    good.set(vectorOf(1, 0), DIMENSION);
    await table.bulkAdd([
      // Too few bytes for its count.
      {
        dimension: DIMENSION,
        count: 2,
        docIds: ['d2', 'd2'],
        indexes: [0, 1],
        vectors: new ArrayBuffer(8),
      },
      // Vectors of the wrong type.
      { dimension: DIMENSION, count: 1, docIds: ['d2'], indexes: [0], vectors: 'not bytes' },
      // Names a document that is not stored, and repeats a chunk another block holds.
      {
        dimension: DIMENSION,
        count: 2,
        docIds: ['d3', 'd1'],
        indexes: [0, 0],
        vectors: good.buffer,
      },
      { note: 'not a block at all' },
    ]);
    raw.close();

    const knowledge = new KnowledgeBase(fixture.reopen(), axisEmbedder, {
      ...DEFAULT_KNOWLEDGE_CONFIG,
      minScore: 0,
    });
    const errors = await knowledge.storageErrors();
    expect(errors).toHaveLength(4);
    expect(errors.every((error) => isAirlockError(error, 'storage-failed'))).toBe(true);
    expect(errors.map((error) => error.message).join('\n')).toMatch(
      /vectors hold 8 bytes, not the 64/,
    );
    expect(errors.map((error) => error.message).join('\n')).toMatch(/not an ArrayBuffer/);
    expect(errors.map((error) => error.message).join('\n')).toMatch(/"d3" is not stored/);
    expect(errors.map((error) => error.message).join('\n')).toMatch(
      /chunk 0 of "d1" is stored twice/,
    );
    const hits = await knowledge.search('doc 2', { signal, k: 2 });
    expect(hits.map((hit) => [hit.docId, hit.chunkIndex])).toEqual([
      ['d2', 0],
      ['d2', 1],
    ]);
    expect((await knowledge.search('doc 1', { signal, k: 1 }))[0]).toMatchObject({
      docId: 'd1',
      chunkIndex: 0,
      text: 'doc 1 chunk 0',
    });
  });
});
