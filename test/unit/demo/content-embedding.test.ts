// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { contentEmbedding, contentWords } from '../../../demo/model/content-embedding';
import { OFFLINE_KNOWLEDGE_MIN_SCORE } from '../../../demo/shared/offline-model-path';
import { hashedEmbedding } from '../../../src/testing/hashed-embedding';

const HOLIDAY_POLICY =
  'Holiday policy: every employee gets 25 days of paid holiday a year. Holidays are booked with your manager at least two weeks in advance. Unused days carry over to the next year, up to five days.';
const LIGHTHOUSE_NOTES =
  'The Glimmerfen lighthouse is kept by Orla Vance. She lights the lamp at dusk and logs every passing ship.';

/** The cosine similarity of two unit vectors, as the knowledge index scores them. */
function score(embed: (text: string) => number[], passage: string, question: string): number {
  const a = embed(passage);
  const b = embed(question);
  return a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);
}

describe("the offline model's content-word embedding", () => {
  it('keeps the words that carry a topic and folds plurals', () => {
    expect(contentWords('What is the capital of France?')).toEqual(['capital', 'france']);
    expect(contentWords('How many holidays do I get?')).toEqual(['holiday']);
    expect(contentWords('Company policies for glass buses')).toEqual([
      'company',
      'policy',
      'glass',
      'buse',
    ]);
  });

  it('scores "What is the capital of France?" below the cut-off against a holiday policy, which stop words alone put above it', () => {
    const question = 'What is the capital of France?';
    // Before: "what", "is", "the", "of" matched the policy's own.
    expect(score(hashedEmbedding, HOLIDAY_POLICY, question)).toBeGreaterThan(0.2);
    expect(score(contentEmbedding, HOLIDAY_POLICY, question)).toBeLessThan(
      OFFLINE_KNOWLEDGE_MIN_SCORE,
    );
    expect(score(contentEmbedding, HOLIDAY_POLICY, 'What is the weather in Paris?')).toBeLessThan(
      OFFLINE_KNOWLEDGE_MIN_SCORE,
    );
  });

  it('scores holiday questions above the cut-off against the holiday policy', () => {
    for (const question of [
      'How many holidays do I get?',
      'How many days of holiday do I get a year?',
    ]) {
      expect(score(contentEmbedding, HOLIDAY_POLICY, question)).toBeGreaterThanOrEqual(
        OFFLINE_KNOWLEDGE_MIN_SCORE,
      );
    }
  });

  it('still finds the lighthouse keeper the end-to-end test asks about, and only in its document', () => {
    const question = 'Who keeps the Glimmerfen lighthouse?';
    expect(score(contentEmbedding, LIGHTHOUSE_NOTES, question)).toBeGreaterThanOrEqual(
      OFFLINE_KNOWLEDGE_MIN_SCORE,
    );
    expect(score(contentEmbedding, HOLIDAY_POLICY, question)).toBeLessThan(
      OFFLINE_KNOWLEDGE_MIN_SCORE,
    );
  });

  it('gives a text of stop words only no direction at all, so it matches nothing', () => {
    expect(contentEmbedding('what is it?').every((value) => value === 0)).toBe(true);
    expect(contentEmbedding('Paris', 64)).toHaveLength(64);
  });
});
