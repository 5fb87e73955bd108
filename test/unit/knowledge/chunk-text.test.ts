import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../../src/knowledge/chunk-text';

describe('chunkText', () => {
  it('gives no chunk for an empty or blank text and one chunk for a short one', () => {
    const options = { chunkChars: 100, overlapChars: 20 };
    expect(chunkText('', options)).toEqual([]);
    expect(chunkText('   \n ', options)).toEqual([]);
    expect(chunkText('A short note.', options)).toEqual(['A short note.']);
  });

  it('ends chunks at sentence breaks and repeats the overlap at the start of the next', () => {
    const sentences = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} is here.`);
    const chunks = chunkText(sentences.join(' '), { chunkChars: 120, overlapChars: 40 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.endsWith('.')).toBe(true);
    for (let i = 1; i < chunks.length; i++) {
      const previousTail = (chunks[i - 1] as string).slice(-15);
      expect(chunks[i]).toContain(previousTail.trim().split(' ').at(-1));
    }
  });

  it('keeps every chunk within chunkChars and covers every word of the text', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 20, max: 200 }),
        fc.integer({ min: 0, max: 19 }),
        (words, chunkChars, overlapChars) => {
          const text = words.join(' ');
          const chunks = chunkText(text, { chunkChars, overlapChars });
          for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(chunkChars);
          const covered = new Set(chunks.join(' ').split(/\s+/));
          // A word longer than a chunk is cut, so only words that fit must appear whole.
          for (const word of words)
            if (word.length < chunkChars / 4) expect(covered).toContain(word);
        },
      ),
      { numRuns: 200 },
    );
  });
});
