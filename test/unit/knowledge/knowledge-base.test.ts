import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { KnowledgeBase } from '../../../src/knowledge/knowledge-base';
import type { EmbeddingModel } from '../../../src/model/embedding-model';
import { DEFAULT_KNOWLEDGE_CONFIG, type KnowledgeConfig } from '../../../src/protocol/knowledge';
import { hashedEmbedding } from '../../../src/testing/hashed-embedding';
import { freshStore } from '../store/store-fixture';

/** Hashed embeddings, counting requests; `dimension` can change to mimic a new model. */
function fakeEmbedder(dimension = 256) {
  const model = {
    name: 'hashed',
    dimension,
    requests: [] as string[][],
    embed: async (texts: readonly string[]) => {
      model.requests.push([...texts]);
      return texts.map((text) => hashedEmbedding(text, model.dimension));
    },
  };
  return model satisfies EmbeddingModel;
}

const config: KnowledgeConfig = {
  ...DEFAULT_KNOWLEDGE_CONFIG,
  chunkChars: 80,
  overlapChars: 20,
  batchSize: 2,
};
const signal = new AbortController().signal;
const long = (topic: string) =>
  Array.from({ length: 8 }, (_, i) => `Fact ${i} about ${topic}: ${topic} matters here.`).join(' ');

describe('KnowledgeBase over the Dexie store', () => {
  it('embeds in batches, reports progress and finds the right document first', async () => {
    const { store } = freshStore();
    const embedder = fakeEmbedder();
    const knowledge = new KnowledgeBase(store, embedder, config);
    const progress: number[] = [];
    const record = await knowledge.add(
      { id: 'volcanoes', title: 'Volcanoes', text: long('volcanoes') },
      { signal, onProgress: (step) => progress.push(step.embeddedChunks) },
    );
    await knowledge.add({ id: 'gardens', title: 'Gardens', text: long('gardens') }, { signal });
    expect(record).toMatchObject({
      chunkCount: expect.any(Number),
      dimension: 256,
      embeddingModel: 'hashed',
    });
    expect(record.chunkCount).toBeGreaterThan(2);
    expect(embedder.requests[0]).toHaveLength(2);
    expect(progress.at(-1)).toBe(record.chunkCount);
    const hits = await knowledge.search('tell me about volcanoes', { signal });
    expect(hits[0]).toMatchObject({ docId: 'volcanoes', title: 'Volcanoes' });
    expect(hits[0]?.text).toContain('volcanoes');
  });

  it('knows it is empty only once its index is read, and not after a document is added or removed to nothing', async () => {
    const { store } = freshStore();
    const knowledge = new KnowledgeBase(store, fakeEmbedder(), config);
    // Not read yet: a run must not skip retrieval on a guess.
    expect(knowledge.knownEmpty).toBe(false);
    expect(await knowledge.isEmpty()).toBe(true);
    expect(knowledge.knownEmpty).toBe(true);

    await knowledge.add(
      { id: 'volcanoes', title: 'Volcanoes', text: long('volcanoes') },
      { signal },
    );
    expect(knowledge.knownEmpty).toBe(false);
    await knowledge.remove('volcanoes');
    expect(knowledge.knownEmpty).toBe(true);
  });

  it('loads the index once from the store and keeps it in step with adds and removes', async () => {
    const fixture = freshStore();
    const first = new KnowledgeBase(fixture.store, fakeEmbedder(), config);
    await first.add({ id: 'a', title: 'A', text: long('apples') }, { signal });
    await first.add({ id: 'b', title: 'B', text: long('bicycles') }, { signal });

    const store = fixture.reopen();
    let vectorReads = 0;
    const counting = new Proxy(store, {
      get: (target, key) => {
        if (key === 'listVectorBlocks') vectorReads += 1;
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const second = new KnowledgeBase(counting, fakeEmbedder(), config);
    expect((await second.search('apples', { signal }))[0]?.docId).toBe('a');
    await second.remove('a');
    expect((await second.search('apples', { signal })).map((hit) => hit.docId)).not.toContain('a');
    await second.add({ id: 'a', title: 'A again', text: long('apples') }, { signal });
    expect((await second.search('apples', { signal }))[0]).toMatchObject({
      docId: 'a',
      title: 'A again',
    });
    expect(vectorReads).toBe(1);
    expect((await second.list()).map((document) => document.id).sort()).toEqual(['a', 'b']);
  });

  it('refuses vectors of another length and leaves the stored document alone', async () => {
    const { store } = freshStore();
    const embedder = fakeEmbedder();
    const knowledge = new KnowledgeBase(store, embedder, config);
    await knowledge.add({ id: 'a', title: 'A', text: long('apples') }, { signal });
    embedder.dimension = 128;
    const added = knowledge.add({ id: 'a', title: 'A2', text: long('pears') }, { signal });
    await expect(added).rejects.toSatisfy((error) =>
      isAirlockError(error, 'knowledge-dimension-mismatch'),
    );
    await expect(knowledge.search('apples', { signal })).rejects.toSatisfy((error) =>
      isAirlockError(error, 'knowledge-dimension-mismatch'),
    );
    expect((await store.listDocuments())[0]).toMatchObject({ title: 'A', dimension: 256 });
  });

  it('stores nothing of an import aborted between batches', async () => {
    const { store } = freshStore();
    const controller = new AbortController();
    const knowledge = new KnowledgeBase(store, fakeEmbedder(), config);
    const added = knowledge.add(
      { id: 'a', title: 'A', text: long('apples') },
      { signal: controller.signal, onProgress: () => controller.abort() },
    );
    await expect(added).rejects.toThrow();
    expect(await store.listDocuments()).toEqual([]);
    expect(await store.listVectorBlocks()).toEqual([]);
  });

  it('rejects a malformed document with invalid-input', async () => {
    const knowledge = new KnowledgeBase(freshStore().store, fakeEmbedder(), config);
    const bad = { id: '', title: 'x', text: 'y' };
    await expect(knowledge.add(bad, { signal })).rejects.toSatisfy((error) =>
      isAirlockError(error, 'invalid-input'),
    );
  });
});
