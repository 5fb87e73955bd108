import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { toUnitVector, VectorIndex } from '../../../src/knowledge/vector-index';
import { hashedEmbedding } from '../../../src/testing/hashed-embedding';

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
