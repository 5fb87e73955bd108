import Dexie from 'dexie';
import { IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { buildCodesIndex } from '../../../src/knowledge/build-index';
import { KnowledgeBase } from '../../../src/knowledge/knowledge-base';
import { toUnitVector, VectorIndex } from '../../../src/knowledge/vector-index';
import type { EmbeddingModel } from '../../../src/model/embedding-model';
import {
  DEFAULT_KNOWLEDGE_CONFIG,
  type KnowledgeChunkRecord,
  type KnowledgeDocumentRecord,
} from '../../../src/protocol/knowledge';
import type { ConversationStore } from '../../../src/store/store';
import { codesOfBlock, packVectorBlock, parseVectorBlock } from '../../../src/store/vector-blocks';
import { seededRandom } from '../../soak/soak-plan';
import { freshStore } from '../store/store-fixture';

// A new agent worker searches with the stored int8 copies of the vectors while it reads the
// floats (a quarter of the bytes first): these tests hold the copies to the floats.

const DIMENSION = 200;
const signal = new AbortController().signal;

const randomUnit = (random: () => number) =>
  toUnitVector(Array.from({ length: DIMENSION }, () => random() - 0.5));

function documentOf(doc: number, chunkCount: number): KnowledgeDocumentRecord {
  return {
    id: `d${doc}`,
    title: `Doc ${doc}`,
    chunkCount,
    chars: chunkCount,
    embeddingModel: 'random',
    dimension: DIMENSION,
    addedAt: doc,
  };
}

/** `documents` documents of `chunks` random chunks each, stored; their vectors by key. */
async function storeRandom(
  store: ConversationStore,
  random: () => number,
  documents: number,
  chunks: number,
): Promise<Map<string, Float32Array>> {
  const vectors = new Map<string, Float32Array>();
  for (let doc = 0; doc < documents; doc++) {
    const rows: KnowledgeChunkRecord[] = Array.from({ length: chunks }, (_, index) => ({
      docId: `d${doc}`,
      index,
      text: `doc ${doc} chunk ${index}`,
      vector: randomUnit(random),
    }));
    await store.putDocument(documentOf(doc, chunks), rows);
    for (const row of rows) vectors.set(`${row.docId}#${row.index}`, row.vector);
  }
  return vectors;
}

/** Embeds a stored chunk's key (`d4#7`) as that chunk's vector. */
function keyEmbedder(vectors: ReadonlyMap<string, Float32Array>): EmbeddingModel {
  return {
    name: 'random',
    embed: async (texts) =>
      texts.map((text) => {
        const vector = vectors.get(text);
        if (!vector) throw new Error(`No vector for "${text}".`);
        return [...vector];
      }),
  };
}

const cosine = (a: Float32Array, b: Float32Array) =>
  a.reduce((sum, value, i) => sum + value * (b[i] as number), 0);

/** A store whose reads of the float blocks wait until `release` is called, counting its reads of the copies. */
function withHeldFloats(store: ConversationStore) {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const reads = { codes: 0 };
  const held = new Proxy(store, {
    get: (target, key) => {
      if (key === 'listVectorBlocks')
        return async (...page: Parameters<ConversationStore['listVectorBlocks']>) => {
          await released;
          return target.listVectorBlocks(...page);
        };
      if (key === 'listVectorCodes') reads.codes += 1;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { held, release, reads };
}

/** Whether `promise` is still pending once the queued tasks have run. */
async function pending(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  return !settled;
}

const config = { ...DEFAULT_KNOWLEDGE_CONFIG, minScore: -1 };

describe('the int8 copies of the stored vectors', () => {
  it('are kept in step with the blocks through adds, replaces, removes and merges', async () => {
    const { store } = freshStore();
    const random = seededRandom(3);
    await storeRandom(store, random, 30, 10);
    for (let doc = 0; doc < 30; doc += 2) await store.deleteDocument(`d${doc}`);
    await store.putDocument(
      documentOf(1, 1_200),
      Array.from({ length: 1_200 }, (_, index) => ({
        docId: 'd1',
        index,
        text: `${index}`,
        vector: randomUnit(random),
      })),
    );
    const blocks = (await store.listVectorBlocks()) as { id: number }[];
    const codes = await store.listVectorCodes();
    expect(blocks.length).toBeGreaterThan(1);
    expect(codes).toEqual(
      blocks.map((row) => {
        const parsed = parseVectorBlock(row);
        if (!('block' in parsed)) throw new Error(parsed.problem);
        return codesOfBlock(row.id, parsed.block);
      }),
    );
  });

  it('answer searches with scores within 0.02 of the cosine, and mostly the same rows as the floats', async () => {
    const { store } = freshStore();
    const random = seededRandom(7);
    const vectors = await storeRandom(store, random, 40, 50);
    const documents = await store.listDocuments();
    const approximate = buildCodesIndex(await store.listVectorCodes(), documents) as VectorIndex;
    const exact = new VectorIndex({ scan: 'exact' });
    for (let doc = 0; doc < 40; doc++)
      exact.setDocument(
        `d${doc}`,
        Array.from({ length: 50 }, (_, index) => ({
          index,
          vector: vectors.get(`d${doc}#${index}`) as Float32Array,
        })),
      );
    expect(approximate.approximate).toBe(true);
    expect(approximate.size).toBe(2_000);
    let same = 0;
    for (let i = 0; i < 50; i++) {
      const query = randomUnit(random);
      const truth = new Set(exact.search(query, 10, -1).map((hit) => `${hit.docId}#${hit.index}`));
      const hits = approximate.search(query, 10, -1);
      expect(hits).toHaveLength(10);
      for (const hit of hits) {
        const key = `${hit.docId}#${hit.index}`;
        if (truth.has(key)) same += 1;
        expect(Math.abs(hit.score - cosine(vectors.get(key) as Float32Array, query))).toBeLessThan(
          0.02,
        );
      }
    }
    expect(same / 500).toBeGreaterThanOrEqual(0.8);
    // Read only: an index is changed only once built from the floats.
    expect(() => approximate.removeDocument('d1')).toThrow(/read only/);
    expect(() => approximate.setDocument('d1', [])).toThrow(/read only/);
  });
});

describe('the index of the int8 copies', () => {
  // Rows as long as the vectors (256) take a whole block's codes at once; others (200, in
  // rows of 208) are copied vector by vector, as is a block with a vector left out.
  it.each([256, 200])(
    'finds each kept chunk by its own vector at %i dimensions, and leaves out strays and repeats',
    (dimension) => {
      const random = seededRandom(dimension);
      const unit = () => toUnitVector(Array.from({ length: dimension }, () => random() - 0.5));
      const documents = [0, 1, 2].map((doc) => ({ ...documentOf(doc, 30), dimension }));
      const chunks = documents.flatMap((document) =>
        Array.from({ length: 30 }, (_, index) => ({
          docId: document.id,
          index,
          vector: unit(),
        })),
      );
      const whole = codesOfBlock(1, packVectorBlock(dimension, chunks.slice(0, 45)));
      const mixed = codesOfBlock(
        2,
        packVectorBlock(dimension, [
          { docId: 'ghost', index: 0, vector: unit() },
          ...chunks.slice(45, 60),
          { ...(chunks[3] as (typeof chunks)[number]), vector: unit() },
          ...chunks.slice(60),
        ]),
      );
      const index = buildCodesIndex([whole, mixed], documents) as VectorIndex;
      expect(index.size).toBe(90);
      for (const chunk of chunks) {
        const [hit] = index.search(chunk.vector, 1, -1);
        expect(hit).toMatchObject({ docId: chunk.docId, index: chunk.index });
        expect(Math.abs((hit?.score ?? 0) - 1)).toBeLessThan(0.02);
      }
    },
  );
});

describe('a KnowledgeBase over many stored vectors', () => {
  it('answers from the copies before the floats are read, then scores exactly; writes wait for the floats', async () => {
    const fixture = freshStore();
    const random = seededRandom(11);
    const vectors = await storeRandom(fixture.store, random, 20, 30);
    const { held, release } = withHeldFloats(fixture.reopen());
    const knowledge = new KnowledgeBase(held, keyEmbedder(vectors), config, {
      codesFirstAt: 100,
    });
    const query = 'd4#7';

    const early = await knowledge.search(query, { signal, k: 3 });
    expect(early[0]).toMatchObject({ docId: 'd4', chunkIndex: 7, text: 'doc 4 chunk 7' });
    // Each hit says its score is the copies'.
    expect(early.map((hit) => hit.approximate)).toEqual([true, true, true]);
    expect(Math.abs((early[0]?.score ?? 0) - 1)).toBeLessThan(0.02);
    expect(await knowledge.isEmpty()).toBe(false);
    // Nothing known yet of the rows the floats would leave out; the floats are not read.
    expect(await knowledge.storageErrors()).toEqual([]);
    const exact = knowledge.exact();
    // A document whose one chunk is that same vector.
    const added = knowledge.add({ id: 'late', title: 'Late', text: query }, { signal });
    expect(await pending(exact)).toBe(true);
    expect(await pending(added)).toBe(true);

    release();
    await exact;
    await added;
    const hits = await knowledge.search(query, { signal, k: 2 });
    expect(hits.map((hit) => hit.docId).sort()).toEqual(['d4', 'late']);
    for (const hit of hits) {
      expect(hit.score).toBeCloseTo(1, 5);
      expect(hit).not.toHaveProperty('approximate');
    }
  });

  it('reads the floats first below `codesFirstAt` vectors, and when the copies cannot be read', async () => {
    const fixture = freshStore();
    const small = withHeldFloats(fixture.reopen());
    const vectors = await storeRandom(fixture.store, seededRandom(5), 2, 10);
    const knowledge = new KnowledgeBase(small.held, keyEmbedder(vectors), config, {
      codesFirstAt: 100,
    });
    const query = 'd1#1';
    const search = knowledge.search(query, { signal });
    expect(await pending(search)).toBe(true);
    small.release();
    const hits = await search;
    expect(hits).toHaveLength(DEFAULT_KNOWLEDGE_CONFIG.k);
    // Read from the floats: exact.
    expect(hits.filter((hit) => 'approximate' in hit)).toEqual([]);
    // The documents say 20 chunks are stored: the copies are not read at all.
    expect(small.reads.codes).toBe(0);

    const failing = new Proxy(fixture.reopen(), {
      get: (target, key) => {
        if (key === 'listVectorCodes') return () => Promise.reject(new Error('disk gone'));
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const fallback = new KnowledgeBase(failing, keyEmbedder(vectors), config, { codesFirstAt: 1 });
    expect(await fallback.search(query, { signal })).toHaveLength(DEFAULT_KNOWLEDGE_CONFIG.k);
  });

  it('only picks its path from the stored chunk counts: counts of another type or that lie still end in the floats', async () => {
    const fixture = freshStore();
    const vectors = await storeRandom(fixture.store, seededRandom(17), 2, 10);
    const raw = new Dexie(fixture.name, {
      indexedDB: fixture.indexedDB as IDBFactory,
      IDBKeyRange,
    });
    await raw.open();
    const documents = raw.table('documents');
    // Rows written by other code: a count as a string, a negative one.
    await documents.update('d0', { chunkCount: '99999' });
    await documents.update('d1', { chunkCount: -5 });
    const query = 'd0#3';
    const unread = withHeldFloats(fixture.reopen());
    unread.release();
    const counted = new KnowledgeBase(unread.held, keyEmbedder(vectors), config, {
      codesFirstAt: 100,
    });
    const hits = await counted.search(query, { signal });
    expect(hits[0]).toMatchObject({ docId: 'd0', chunkIndex: 3 });
    expect(hits[0]?.score).toBeCloseTo(1, 5);
    expect(hits.filter((hit) => 'approximate' in hit)).toEqual([]);
    // Neither counts as chunks: the copies are not read.
    expect(unread.reads.codes).toBe(0);
    // The floats' index checks blocks against the counts, as before: d1's are left out, reported.
    expect((await counted.storageErrors()).map((error) => error.details?.table)).toEqual([
      'vectorBlocks',
    ]);

    // A count that claims far more chunks than are stored: the copies are read, hold too
    // few vectors to answer from, and the floats answer, exactly.
    await documents.update('d0', { chunkCount: 1_000_000 });
    raw.close();
    const lied = withHeldFloats(fixture.reopen());
    lied.release();
    const misled = new KnowledgeBase(lied.held, keyEmbedder(vectors), config, {
      codesFirstAt: 100,
    });
    const exact = await misled.search(query, { signal });
    expect(lied.reads.codes).toBe(1);
    expect(exact[0]).toMatchObject({ docId: 'd0', chunkIndex: 3 });
    expect(exact[0]?.score).toBeCloseTo(1, 5);
    expect(exact.filter((hit) => 'approximate' in hit)).toEqual([]);
  });

  it('ends with the index of the floats whatever the copies say, and reports the floats left out', async () => {
    const fixture = freshStore();
    const random = seededRandom(13);
    const vectors = await storeRandom(fixture.store, random, 10, 30);
    const raw = new Dexie(fixture.name, {
      indexedDB: fixture.indexedDB as IDBFactory,
      IDBKeyRange,
    });
    await raw.open();
    const codesTable = raw.table('vectorCodes');
    const [first] = (await codesTable.toArray()) as { id: number; docIds: string[] }[];
    // Copies that lie: the first block's copy now says its vectors are document d9's
    // (d9 is stored twice in the copies then), beside rows of no shape at all.
    await codesTable.put({ ...first, docIds: first?.docIds.map(() => 'd9') });
    await codesTable.bulkPut([{ id: 999, codes: 'nope' }, { id: 1_000 }]);
    // A float block naming a document that is not stored: reported once the floats are read.
    await raw.table('vectorBlocks').add({
      dimension: DIMENSION,
      count: 1,
      docIds: ['ghost'],
      indexes: [0],
      vectors: new Float32Array(DIMENSION).buffer,
    });
    raw.close();

    const { held, release } = withHeldFloats(fixture.reopen());
    // The copies keep one row per chunk they name (about 60 here): enough to answer first.
    const knowledge = new KnowledgeBase(held, keyEmbedder(vectors), config, {
      codesFirstAt: 10,
    });
    const query = 'd0#3';
    // The copies answer, wrongly named where they lie: d0's rows are d9's in them.
    expect((await knowledge.search(query, { signal, k: 1 }))[0]?.docId).not.toBe('d0');
    release();
    await knowledge.exact();
    expect((await knowledge.search(query, { signal, k: 1 }))[0]).toMatchObject({
      docId: 'd0',
      chunkIndex: 3,
    });
    const errors = await knowledge.storageErrors();
    expect(errors).toHaveLength(1);
    expect(isAirlockError(errors[0], 'storage-failed')).toBe(true);
    expect(errors[0]?.message).toMatch(/"ghost" is not stored/);
  });

  it('reads the floats a few blocks at a time, so that other reads are not held behind them', async () => {
    const fixture = freshStore();
    // Nine documents of 600 chunks: a block each (none small enough to merge).
    const vectors = await storeRandom(fixture.store, seededRandom(17), 9, 600);
    const pages: unknown[] = [];
    const counting = new Proxy(fixture.reopen(), {
      get: (target, key) => {
        if (key === 'listVectorBlocks')
          return (page: Parameters<ConversationStore['listVectorBlocks']>[0]) => {
            pages.push(page);
            return target.listVectorBlocks(page);
          };
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const knowledge = new KnowledgeBase(counting, keyEmbedder(vectors), config, {
      codesFirstAt: Number.POSITIVE_INFINITY,
    });
    expect((await knowledge.search('d8#599', { signal, k: 1 }))[0]).toMatchObject({
      docId: 'd8',
      chunkIndex: 599,
    });
    const ids = ((await fixture.store.listVectorBlocks()) as { id: number }[]).map((row) => row.id);
    expect(pages).toEqual([
      { after: undefined, limit: 4 },
      { after: ids[3], limit: 4 },
      { after: ids[7], limit: 4 },
    ]);
  });

  it('reads every block, and stops at rows keyed otherwise (which come after all of them)', async () => {
    const fixture = freshStore();
    const vectors = await storeRandom(fixture.store, seededRandom(19), 6, 600);
    const raw = new Dexie(fixture.name, {
      indexedDB: fixture.indexedDB as IDBFactory,
      IDBKeyRange,
    });
    await raw.open();
    // Keys no Airlock writes: IndexedDB orders strings after every number.
    await raw.table('vectorBlocks').bulkPut([
      { id: 'zz', note: 'not a block' },
      { id: 'zzz', note: 'nor this' },
    ]);
    raw.close();
    const knowledge = new KnowledgeBase(fixture.reopen(), keyEmbedder(vectors), config, {
      codesFirstAt: Number.POSITIVE_INFINITY,
    });
    expect((await knowledge.search('d5#42', { signal, k: 1 }))[0]).toMatchObject({
      docId: 'd5',
      chunkIndex: 42,
    });
    // The two rows after the six blocks are read (the second page) and reported.
    expect((await knowledge.storageErrors()).map((error) => error.details.id)).toEqual([
      'zz',
      'zzz',
    ]);
  });
});
