import type { AgentEvent } from 'airlock-agents';
import { hashedEmbedding } from 'airlock-agents/testing/remote';
import Dexie from 'dexie';
import { describe, expect, it } from 'vitest';
import { toUnitVector, VectorIndex } from '../../src/knowledge/vector-index';
import {
  SCHEMA_V1,
  SCHEMA_V2,
  SCHEMA_V3,
  SCHEMA_V4,
  SCHEMA_V5,
  SCHEMA_V6,
} from '../../src/store/schema-versions';
import { packVectorBlocks } from '../../src/store/vector-blocks';
import { agentFor, collect, scriptModel } from './support';

const TOPICS = ['volcanoes magma eruption', 'tomato gardens watering', 'rockets fuel orbit'];

type KnowledgeUsed = Extract<AgentEvent, { type: 'knowledge-used' }>;

/** A database as version 4 of Airlock left it: 3 documents of 400 chunks, each row with text and vector. */
async function writeVersion4(name: string): Promise<void> {
  const v4 = new Dexie(name);
  v4.version(1).stores(SCHEMA_V1);
  v4.version(2).stores(SCHEMA_V2);
  v4.version(3).stores(SCHEMA_V3);
  v4.version(4).stores(SCHEMA_V4);
  await v4.table('conversations').add({
    id: 'kept',
    title: 'Kept',
    createdAt: 1,
    updatedAt: 2,
    summary: '',
    summarizedThroughSeq: 0,
    lastSeq: 0,
  });
  await v4.table('documents').bulkAdd(
    TOPICS.map((topic, doc) => ({
      id: `doc-${doc}`,
      title: topic,
      chunkCount: 400,
      chars: 400 * 40,
      embeddingModel: 'text-embedding-3-small',
      dimension: 256,
      addedAt: doc,
    })),
  );
  await v4.table('chunks').bulkAdd(
    TOPICS.flatMap((topic, doc) =>
      Array.from({ length: 400 }, (_, index) => {
        const text = `${topic} part ${index}`;
        return {
          docId: `doc-${doc}`,
          index,
          text,
          vector: Float32Array.from(hashedEmbedding(text)),
        };
      }),
    ),
  );
  v4.close();
}

/** The `vectorBlocks` table of a database at its current version, opened raw. */
async function openBlocks(name: string) {
  const raw = new Dexie(name);
  await raw.open();
  return raw;
}

describe('knowledge storage', () => {
  it('upgrades a version 4 database: its documents stay, their vectors move into blocks, and the agent searches them', async () => {
    const database = `test-${crypto.randomUUID()}`;
    await writeVersion4(database);
    const session = await scriptModel([{ text: 'Magma rises.' }]);
    const agent = agentFor(session, { memory: { database }, knowledge: { k: 2 } });

    expect((await agent.knowledge.list()).map((document) => document.id).sort()).toEqual([
      'doc-0',
      'doc-1',
      'doc-2',
    ]);
    const hits = await agent.knowledge.search('tomato gardens watering part 17');
    expect(hits[0]).toMatchObject({ docId: 'doc-1', chunkIndex: 17 });
    expect(hits[0]?.text).toBe('tomato gardens watering part 17');
    const events = await collect(agent.run('What about volcanoes magma eruption part 3?'));
    const used = events.find((event): event is KnowledgeUsed => event.type === 'knowledge-used');
    expect(used?.sources[0]).toMatchObject({ docId: 'doc-0', chunkIndex: 3 });
    expect(events.filter((event) => event.type === 'storage-error')).toEqual([]);
    expect((await agent.memory.getConversation('kept'))?.conversation.title).toBe('Kept');

    const raw = await openBlocks(database);
    try {
      const blocks = await raw.table('vectorBlocks').toArray();
      expect(blocks.map((block) => block.count)).toEqual([1_000, 200]);
      expect(blocks.every((block) => block.vectors instanceof ArrayBuffer)).toBe(true);
      // Each block's int8 copy, under its id (written by the version 7 upgrade).
      const copies = await raw.table('vectorCodes').toArray();
      expect(copies.map((copy) => [copy.id, copy.count, copy.codes.byteLength])).toEqual(
        blocks.map((block) => [block.id, block.count, block.count * 256]),
      );
      const chunks = await raw.table('chunks').limit(5).toArray();
      expect(chunks.every((row) => !('vector' in row) && typeof row.text === 'string')).toBe(true);
    } finally {
      raw.close();
    }
  });

  it('answers its first search from the int8 copies of 5,000 stored vectors, a version 6 database upgraded, then retrieves in runs', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const v6 = new Dexie(database);
    [SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5, SCHEMA_V6].forEach((spec, index) => {
      v6.version(index + 1).stores(spec);
    });
    const text = (doc: number, index: number) => `${TOPICS[doc % 3]} volume ${doc} part ${index}`;
    const chunks = Array.from({ length: 5 }, (_, doc) =>
      Array.from({ length: 1_000 }, (_, index) => ({
        docId: `doc-${doc}`,
        index,
        text: text(doc, index),
        vector: Float32Array.from(hashedEmbedding(text(doc, index))),
      })),
    ).flat();
    await v6.table('documents').bulkAdd(
      Array.from({ length: 5 }, (_, doc) => ({
        id: `doc-${doc}`,
        title: `Volume ${doc}`,
        chunkCount: 1_000,
        chars: 40_000,
        embeddingModel: 'text-embedding-3-small',
        dimension: 256,
        addedAt: doc,
      })),
    );
    await v6
      .table('chunks')
      .bulkAdd(chunks.map(({ docId, index, text }) => ({ docId, index, text })));
    await v6.table('vectorBlocks').bulkAdd(packVectorBlocks(chunks));
    v6.close();

    const session = await scriptModel([{ text: 'Watering matters.' }]);
    const agent = agentFor(session, { memory: { database }, knowledge: { k: 3 } });
    const [first] = await agent.knowledge.search(text(4, 321));
    expect(first).toMatchObject({ docId: 'doc-4', chunkIndex: 321, text: text(4, 321) });
    // From the copies or the floats, whichever answered: the same chunk, scored about 1,
    // and exactly 1 when the hit does not say it is approximate.
    expect(Math.abs((first?.score ?? 0) - 1)).toBeLessThan(0.02);
    if (first?.approximate !== true) expect(first?.score).toBeCloseTo(1, 5);
    const events = await collect(agent.run(text(1, 77)));
    const used = events.find((event): event is KnowledgeUsed => event.type === 'knowledge-used');
    expect(used?.sources[0]).toMatchObject({ docId: 'doc-1', chunkIndex: 77 });
    expect(events.filter((event) => event.type === 'storage-error')).toEqual([]);
    expect(events.at(-1)?.type).toBe('run-finish');
  });

  it('leaves hostile vector blocks out with a storage-error each and still retrieves from the valid ones', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const session = await scriptModel([{ text: 'Noted.' }, { text: 'Magma rises.' }]);
    const first = agentFor(session, { memory: { database } });
    await first.knowledge.add({
      id: 'volcanoes',
      title: 'Volcanoes',
      text: 'Volcanoes erupt when magma rises.',
    });
    await first.knowledge.add({
      id: 'gardens',
      title: 'Gardens',
      text: 'Tomatoes grow in sunny gardens.',
    });
    const raw = await openBlocks(database);
    try {
      await raw.table('vectorBlocks').bulkAdd([
        // A block whose buffer is shorter than its count says.
        {
          dimension: 256,
          count: 3,
          docIds: ['gardens', 'gardens', 'gardens'],
          indexes: [0, 1, 2],
          vectors: new ArrayBuffer(12),
        },
        // Vectors of the wrong type.
        { dimension: 256, count: 1, docIds: ['volcanoes'], indexes: [0], vectors: [1, 2, 3] },
        // A valid shape naming a chunk that is not stored.
        {
          dimension: 256,
          count: 1,
          docIds: ['comets'],
          indexes: [0],
          vectors: new Float32Array(256).buffer,
        },
      ]);
    } finally {
      raw.close();
    }

    // A new agent on the same database reads the index afresh.
    const second = agentFor(session, { memory: { database } });
    const events = await collect(second.run('Why does magma make volcanoes erupt?'));

    const errors = events.filter((event) => event.type === 'storage-error');
    expect(errors).toHaveLength(3);
    expect(errors.map((event) => event.type === 'storage-error' && event.error.code)).toEqual([
      'storage-failed',
      'storage-failed',
      'storage-failed',
    ]);
    const messages = errors.map((event) =>
      event.type === 'storage-error' ? event.error.message : '',
    );
    expect(messages.join('\n')).toMatch(/vectors hold 12 bytes/);
    expect(messages.join('\n')).toMatch(/not an ArrayBuffer/);
    expect(messages.join('\n')).toMatch(/"comets" is not stored/);
    const used = events.find((event): event is KnowledgeUsed => event.type === 'knowledge-used');
    expect(used?.sources[0]).toMatchObject({ docId: 'volcanoes', chunkIndex: 0 });
    expect(events.at(-1)?.type).toBe('run-finish');
    const result = await second.knowledge.search('sunny gardens');
    expect(result[0]?.docId).toBe('gardens');
  });

  it('reports a hostile block once per run when the model searches with the tool', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'search_knowledge', arguments: { query: 'magma' } }] },
      { toolCalls: [{ id: 'call_2', name: 'search_knowledge', arguments: { query: 'lava' } }] },
      { text: 'Magma rises.' },
    ]);
    const first = agentFor(session, { memory: { database } });
    await first.knowledge.add({
      id: 'volcanoes',
      title: 'Volcanoes',
      text: 'Volcanoes erupt when magma rises. Lava flows.',
    });
    const raw = await openBlocks(database);
    try {
      await raw
        .table('vectorBlocks')
        .add({ dimension: 0, count: 0, docIds: [], indexes: [], vectors: null });
    } finally {
      raw.close();
    }

    const second = agentFor(session, { memory: { database }, knowledge: { retrieval: 'tool' } });
    const events = await collect(second.run('Tell me about volcanoes.'));

    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === 'storage-error')).toHaveLength(1);
    expect(types.filter((type) => type === 'knowledge-used')).toHaveLength(2);
    expect(types.indexOf('storage-error')).toBeLessThan(types.indexOf('knowledge-used'));
    const used = events.find((event): event is KnowledgeUsed => event.type === 'knowledge-used');
    expect(used?.sources[0]?.docId).toBe('volcanoes');
    expect(events.at(-1)?.type).toBe('run-finish');
  });

  it('scans 6,000 vectors with the int8 SIMD scan and finds what the exact scan finds', () => {
    const quantised = new VectorIndex();
    const exact = new VectorIndex({ scan: 'exact' });
    for (let doc = 0; doc < 120; doc++) {
      const chunks = Array.from({ length: 50 }, (_, index) => ({
        index,
        vector: toUnitVector(
          hashedEmbedding(`doc ${doc} chunk ${index} word${(doc * 31 + index) % 97}`),
        ),
      }));
      quantised.setDocument(`d${doc}`, chunks);
      exact.setDocument(`d${doc}`, chunks);
    }
    expect(quantised.scan).toBe('int8-simd');
    for (const text of ['doc 7 chunk 3', 'word42 chunk 9', 'doc 100 word5']) {
      const query = toUnitVector(hashedEmbedding(text));
      const key = (hit: { docId: string; index: number }) => `${hit.docId}#${hit.index}`;
      expect(quantised.search(query, 10, 0).map(key)).toEqual(exact.search(query, 10, 0).map(key));
    }
  });
});
