import { afterEach, describe, expect, it, vi } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { toUnitVector, VectorIndex } from '../../../src/knowledge/vector-index';
import { hashedEmbedding } from '../../../src/testing/hashed-embedding';
import { seededRandom } from '../../soak/soak-plan';

const embed = (text: string) => toUnitVector(hashedEmbedding(text));

function bruteForce(
  entries: { docId: string; index: number; vector: Float32Array }[],
  query: Float32Array,
) {
  return entries
    .map((entry) => ({
      docId: entry.docId,
      index: entry.index,
      score: entry.vector.reduce((sum, value, i) => sum + value * (query[i] as number), 0),
    }))
    .sort((a, b) => b.score - a.score);
}

describe('VectorIndex', () => {
  it('returns the k most similar chunks, best first, above minScore', () => {
    const index = new VectorIndex();
    index.setDocument('cats', [
      { index: 0, vector: embed('cats purr and sleep all day') },
      { index: 1, vector: embed('a cat chases mice at night') },
    ]);
    index.setDocument('rockets', [{ index: 0, vector: embed('rockets burn fuel to reach orbit') }]);
    const hits = index.search(embed('why do cats purr'), 2, 0.1);
    expect(hits[0]).toMatchObject({ docId: 'cats', index: 0 });
    expect(hits.every((hit) => hit.score >= 0.1)).toBe(true);
    expect(hits.map((hit) => hit.docId)).not.toContain('rockets');
  });

  it('agrees with a brute-force ranking after adds, replaces and removes', () => {
    const index = new VectorIndex();
    let live: { docId: string; index: number; vector: Float32Array }[] = [];
    for (let doc = 0; doc < 40; doc++) {
      const chunks = Array.from({ length: 1 + (doc % 5) }, (_, i) => ({
        index: i,
        vector: embed(`document ${doc} chunk ${i} word${(doc * 7 + i) % 13} topic${doc % 9}`),
      }));
      index.setDocument(`d${doc}`, chunks);
      live = live.filter((entry) => entry.docId !== `d${doc}`);
      live.push(...chunks.map((chunk) => ({ docId: `d${doc}`, ...chunk })));
      if (doc % 3 === 0 && doc > 0) {
        index.removeDocument(`d${doc - 2}`);
        live = live.filter((entry) => entry.docId !== `d${doc - 2}`);
      }
    }
    expect(index.size).toBe(live.length);
    for (const text of ['topic3 word5', 'document 12 chunk 0', 'chunk 4 topic8']) {
      const query = embed(text);
      const expected = bruteForce(live, query).slice(0, 5);
      const found = index.search(query, 5, -1);
      expect(found.map((hit) => hit.score)).toEqual(
        expected.map((hit) => expect.closeTo(hit.score, 5)),
      );
    }
  });

  it('rejects a vector of another length with knowledge-dimension-mismatch', () => {
    const index = new VectorIndex();
    index.setDocument('a', [{ index: 0, vector: new Float32Array([1, 0, 0]) }]);
    let caught: unknown;
    try {
      index.search(new Float32Array([1, 0]), 1, 0);
    } catch (error) {
      caught = error;
    }
    expect(isAirlockError(caught, 'knowledge-dimension-mismatch')).toBe(true);
    expect((caught as { details: unknown }).details).toEqual({ expected: 3, received: 2 });
    expect(() => index.setDocument('b', [{ index: 0, vector: new Float32Array(4) }])).toThrow(
      /4 dimensions/,
    );
    expect(index.size).toBe(1);
  });
});

function randomUnit(random: () => number, dimension: number): Float32Array {
  return toUnitVector(Array.from({ length: dimension }, () => random() - 0.5));
}

/** The same documents in an int8 index and an exact one. */
function twinIndexes(random: () => number, documents: number, chunks: number, dimension: number) {
  const quantised = new VectorIndex();
  const exact = new VectorIndex({ scan: 'exact' });
  const vectors = new Map<string, Float32Array>();
  for (let doc = 0; doc < documents; doc++) {
    const rows = Array.from({ length: chunks }, (_, index) => ({
      index,
      vector: randomUnit(random, dimension),
    }));
    quantised.setDocument(`d${doc}`, rows);
    exact.setDocument(`d${doc}`, rows);
    for (const row of rows) vectors.set(`d${doc}#${row.index}`, row.vector);
  }
  return { quantised, exact, vectors };
}

const keyOf = (hit: { docId: string; index: number }) => `${hit.docId}#${hit.index}`;

describe('VectorIndex, int8 scan with exact rescoring', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('finds at least 90% of the exact top 10 over 100 random queries, with exact scores', () => {
    const random = seededRandom(7);
    // 100 × 50 = 5,000 rows of 200 dimensions (not a multiple of 16: the codes are padded).
    const { quantised, exact, vectors } = twinIndexes(random, 100, 50, 200);
    expect(quantised.scan).toBe('int8-simd');
    expect(exact.scan).toBe('exact');
    let found = 0;
    for (let i = 0; i < 100; i++) {
      const query = randomUnit(random, 200);
      const truth = exact.search(query, 10, -1);
      const hits = quantised.search(query, 10, -1);
      expect(hits).toHaveLength(10);
      const wanted = new Set(truth.map(keyOf));
      found += hits.filter((hit) => wanted.has(keyOf(hit))).length;
      // Every score is the exact cosine, whichever rows were chosen.
      for (const hit of hits) {
        const vector = vectors.get(keyOf(hit)) as Float32Array;
        const cosine = vector.reduce((sum, value, j) => sum + value * (query[j] as number), 0);
        expect(hit.score).toBeCloseTo(cosine, 6);
      }
    }
    expect(found / 1_000).toBeGreaterThanOrEqual(0.9);
  });

  it('returns exactly the order of the exact scan when the best rows stand apart', () => {
    const random = seededRandom(11);
    const { quantised, exact } = twinIndexes(random, 80, 50, 256);
    const query = randomUnit(random, 256);
    // Ten rows at cosines 0.9, 0.85, … 0.45 to the query: each the query blended with noise.
    quantised.setDocument(
      'near',
      Array.from({ length: 10 }, (_, index) => {
        const cosine = 0.9 - index * 0.05;
        const noise = randomUnit(random, 256);
        const blend = query.map(
          (value, i) => cosine * value + Math.sqrt(1 - cosine ** 2) * (noise[i] as number),
        );
        return { index, vector: toUnitVector(blend) };
      }),
    );
    exact.setDocument('near', []);
    const hits = quantised.search(query, 10, 0.3);
    expect(hits.map((hit) => [hit.docId, hit.index])).toEqual(
      Array.from({ length: 10 }, (_, index) => ['near', index]),
    );
    const scores = hits.map((hit) => hit.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(quantised.search(query, 10, 0.62).map((hit) => hit.index)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('stays in step with the exact scan through removes and replaces', () => {
    const random = seededRandom(23);
    const { quantised, exact } = twinIndexes(random, 60, 50, 64);
    for (let doc = 0; doc < 60; doc += 3) {
      quantised.removeDocument(`d${doc}`);
      exact.removeDocument(`d${doc}`);
    }
    for (let doc = 1; doc < 60; doc += 7) {
      const rows = Array.from({ length: 20 }, (_, index) => ({
        index,
        vector: randomUnit(random, 64),
      }));
      quantised.setDocument(`d${doc}`, rows);
      exact.setDocument(`d${doc}`, rows);
    }
    expect(quantised.size).toBe(exact.size);
    expect(quantised.size).toBeGreaterThan(256);
    for (let i = 0; i < 50; i++) {
      const query = randomUnit(random, 64);
      expect(quantised.search(query, 5, -1).map(keyOf)).toEqual(
        exact.search(query, 5, -1).map(keyOf),
      );
    }
  });

  it('never returns a row whose stored vector holds NaN or Infinity, with either scan', () => {
    const random = seededRandom(3);
    for (const [size, value] of [
      [10, Number.NaN],
      [1_000, Number.NaN],
      [10, Number.POSITIVE_INFINITY],
      [1_000, Number.POSITIVE_INFINITY],
    ] as const) {
      const index = new VectorIndex();
      index.setDocument(
        'bad',
        Array.from({ length: size }, (_, index) => ({
          index,
          vector: new Float32Array(16).fill(value),
        })),
      );
      index.setDocument('good', [{ index: 0, vector: randomUnit(random, 16) }]);
      const hits = index.search(randomUnit(random, 16), 5, -1);
      expect(hits.map((hit) => hit.docId)).toEqual(['good']);
    }
  });

  it('scans the float vectors exactly where WebAssembly SIMD is refused', () => {
    vi.spyOn(WebAssembly, 'validate').mockReturnValue(false);
    const random = seededRandom(5);
    const { quantised, exact } = twinIndexes(random, 20, 50, 32);
    expect(quantised.scan).toBe('exact');
    const query = randomUnit(random, 32);
    expect(quantised.search(query, 8, -1)).toEqual(exact.search(query, 8, -1));
  });
});

describe('hashedEmbedding', () => {
  it('is deterministic, unit length and closer for texts that share words', () => {
    const a = hashedEmbedding('The quick brown fox');
    expect(hashedEmbedding('the QUICK brown fox!')).toEqual(a);
    expect(a).toHaveLength(256);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    const dot = (x: number[], y: number[]) =>
      x.reduce((sum, value, i) => sum + value * (y[i] as number), 0);
    expect(dot(a, hashedEmbedding('a brown fox jumps'))).toBeGreaterThan(
      dot(a, hashedEmbedding('rockets reach orbit')),
    );
    expect(hashedEmbedding('words', 64)).toHaveLength(64);
  });
});
