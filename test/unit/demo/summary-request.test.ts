// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { offlineModel } from '../../../demo/model/offline-model';
import { MAX_SUMMARY_CHARS } from '../../../demo/model/summary-request';
import { asReply, requestWith } from './offline-requests';

/** The offline model's answer to Airlock's summary request folding `transcript` into `summary`. */
function summarise(summary: string, transcript: string): string {
  const request = requestWith(
    [
      { role: 'system', content: 'You keep a running summary of a conversation between …' },
      { role: 'user', content: `Current summary:\n${summary}\n\nNew messages:\n${transcript}` },
    ],
    [],
  );
  return asReply(offlineModel(request, 0)).text ?? '';
}

describe("the offline model's running summary", () => {
  it('stays within its bound however long the conversation grows, keeping the newest questions', () => {
    let summary = '(none yet)';
    const lengths: number[] = [];
    for (let round = 1; round <= 40; round++) {
      const transcript = [1, 2, 3]
        .map(
          (turn) =>
            `user: question ${round}.${turn} ${'about the weather '.repeat(4)}\nassistant: an answer`,
        )
        .join('\n');
      summary = summarise(summary, transcript);
      lengths.push(summary.length);
    }

    expect(Math.max(...lengths)).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    // It filled up and then stopped growing, rather than growing with every round.
    expect(lengths.at(-1)).toBeGreaterThan(MAX_SUMMARY_CHARS / 2);
    expect(summary).toMatch(/^The user asked: /);
    expect(summary).toMatch(/question 40\.3 about the weather/);
    expect(summary).not.toMatch(/question 1\.1 /);
  });

  it('cuts a 50,000-character message to an excerpt instead of copying it', () => {
    const huge = 'x'.repeat(50_000);
    const summary = summarise('The user asked: hello', `user: ${huge}\nuser: and the weather?`);

    expect(summary.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(summary).toMatch(/^The user asked: hello \| x+… \| and the weather\?$/);
  });
});
