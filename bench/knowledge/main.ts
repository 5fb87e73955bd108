import { KnowledgeBase } from '../../src/knowledge/knowledge-base';
import { toUnitVector, VectorIndex } from '../../src/knowledge/vector-index';
import type { EmbeddingModel } from '../../src/model/embedding-model';
import { DEFAULT_KNOWLEDGE_CONFIG, type KnowledgeConfig } from '../../src/protocol/knowledge';
import { openStore } from '../../src/store/dexie-store';
import { HASHED_EMBEDDING_DIMENSION, hashedEmbedding } from '../../src/testing/hashed-embedding';
import { reportBench } from '../page-report';
import { summarize } from '../stats';

// Knowledge at 1k, 10k, 50k and 100k chunks: search latency, import throughput and storage per
// chunk. Embeddings are the hashed bag-of-words of the tests, computed here, so the figures
// exclude the model's latency (a real /embeddings request adds its round trip to each).

const database = `airlock-bench-knowledge-${Date.now()}`;
const CHUNKS_PER_DOCUMENT = 50;
const config: KnowledgeConfig = {
  ...DEFAULT_KNOWLEDGE_CONFIG,
  chunkChars: 500,
  overlapChars: 0,
  batchSize: 64,
  minScore: -1,
};
const signal = new AbortController().signal;

/** Embeds locally: no request, so imports and searches measure Airlock, not a model. */
const localEmbedder: EmbeddingModel = {
  name: 'hashed-bag-of-words',
  embed: async (texts) => texts.map((text) => hashedEmbedding(text)),
};

const VOCABULARY = Array.from({ length: 5_000 }, (_, i) => `w${i.toString(36)}`);

/** A pseudo-random word stream (seeded), so every chunk has a vector of its own. */
function words(seed: number, count: number): string {
  let state = seed * 2_654_435_761 + 1;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    out.push(VOCABULARY[state % VOCABULARY.length] as string);
  }
  return out.join(' ');
}

/** A document of about `CHUNKS_PER_DOCUMENT` chunks of ~500 characters. */
function documentText(seed: number): string {
  return Array.from({ length: CHUNKS_PER_DOCUMENT }, (_, i) => `${words(seed * 1_000 + i, 80)}.`)
    .map((paragraph) => paragraph.slice(0, 480))
    .join('\n\n');
}

/** Adds documents until the store holds `target` chunks; returns chunks added per second. */
async function fill(knowledge: KnowledgeBase, from: number, target: number): Promise<number> {
  let chunks = from;
  let seed = from;
  const started = performance.now();
  while (chunks < target) {
    const added = await knowledge.add(
      { id: `doc-${seed}`, title: `Document ${seed}`, text: documentText(seed) },
      { signal },
    );
    chunks += added.chunkCount;
    seed += 1;
  }
  return Math.round((chunks - from) / ((performance.now() - started) / 1000));
}

/** Search latency through the knowledge base: embed the query, scan the index, read k chunks. */
async function searchLatency(knowledge: KnowledgeBase, samples: number) {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const query = words(900_000 + i, 12);
    const started = performance.now();
    await knowledge.search(query, { signal, k: 5 });
    times.push(performance.now() - started);
  }
  return summarize(times);
}

/** How the scans below searched (`int8-simd` where WebAssembly SIMD runs). */
let indexScan = 'none';

/** The index search alone, at `size` rows of random unit vectors. */
function indexSearch(size: number, samples: number) {
  const index = new VectorIndex();
  const dimension = HASHED_EMBEDDING_DIMENSION;
  for (let doc = 0; doc < size / CHUNKS_PER_DOCUMENT; doc++) {
    index.setDocument(
      `d${doc}`,
      Array.from({ length: CHUNKS_PER_DOCUMENT }, (_, i) => ({
        index: i,
        vector: toUnitVector(Array.from({ length: dimension }, () => Math.random() - 0.5)),
      })),
    );
  }
  indexScan = index.scan;
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const query = toUnitVector(Array.from({ length: dimension }, () => Math.random() - 0.5));
    const started = performance.now();
    index.search(query, 5, -1);
    times.push(performance.now() - started);
  }
  return summarize(times);
}

async function main(): Promise<unknown> {
  const store = openStore({ name: database });
  const knowledge = new KnowledgeBase(store, localEmbedder, config);
  const before = (await navigator.storage.estimate()).usage ?? 0;
  const importChunksPerSecond: Record<string, number> = {};
  const searchMs: Record<string, ReturnType<typeof summarize>> = {};
  let stored = 0;
  let firstAnswerMs50k = Number.NaN;
  let exactIndexMs50k = Number.NaN;
  let codesReadMs50k = Number.NaN;
  let vectorReadMs50k = Number.NaN;
  for (const [label, size] of [
    ['1k', 1_000],
    ['10k', 10_000],
    ['50k', 50_000],
    ['100k', 100_000],
  ] as const) {
    importChunksPerSecond[label] = await fill(knowledge, stored, size);
    stored = size;
    searchMs[label] = await searchLatency(knowledge, 100);
    if (size === 50_000) {
      // What a new agent worker does on its first query: the int8 copies read from IndexedDB
      // into an index that answers it, then the floats read into the exact index behind it.
      // The median of three, and of three reads of the stored copies and floats alone.
      const answers: number[] = [];
      const loads: number[] = [];
      const codesReads: number[] = [];
      const reads: number[] = [];
      for (let i = 0; i < 3; i++) {
        let reading = performance.now();
        await store.listVectorCodes();
        codesReads.push(performance.now() - reading);
        reading = performance.now();
        await store.listVectorBlocks();
        reads.push(performance.now() - reading);
        const reopened = new KnowledgeBase(store, localEmbedder, config);
        const loading = performance.now();
        const hits = await reopened.search(words(800_000 + i, 12), { signal, k: 5 });
        if (hits.length === 0) throw new Error('The first search found nothing.');
        answers.push(performance.now() - loading);
        await reopened.exact();
        loads.push(performance.now() - loading);
      }
      firstAnswerMs50k = Math.round(summarize(answers).p50);
      exactIndexMs50k = Math.round(summarize(loads).p50);
      codesReadMs50k = Math.round(summarize(codesReads).p50);
      vectorReadMs50k = Math.round(summarize(reads).p50);
    }
  }
  const after = (await navigator.storage.estimate()).usage ?? 0;
  const results = {
    dimension: HASHED_EMBEDDING_DIMENSION,
    chunkChars: config.chunkChars,
    searchMs,
    indexScanMs: {
      '1k': indexSearch(1_000, 100),
      '10k': indexSearch(10_000, 100),
      '50k': indexSearch(50_000, 100),
      '100k': indexSearch(100_000, 100),
    },
    importChunksPerSecond,
    firstAnswerMs50k,
    exactIndexMs50k,
    codesReadMs50k,
    vectorReadMs50k,
    indexScan,
    storageBytesPerChunk: Math.round((after - before) / stored),
  };
  store.close();
  return results;
}

reportBench(main);
