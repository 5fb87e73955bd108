import { describe, expect, it } from 'vitest';
import type { RunLimits } from '../../../src/protocol/agent-config';
import { readRunInput } from '../../../src/worker/run/run-input';

// The agent worker decides what a run's input may store, whatever the page checked before.

const limits = { maxInputChars: 100_000 } as RunLimits;
const urlOf = (length: number) => {
  const head = 'https://images.example.com/';
  return `${head}${'a'.repeat(length - head.length)}`;
};

describe('readRunInput', () => {
  it('refuses an https: image URL longer than a stored message may hold, naming the limit', async () => {
    const refused = readRunInput(
      [
        { type: 'text', text: 'Look.' },
        { type: 'image', image: urlOf(2_049) },
      ],
      limits,
    );

    await expect(refused).rejects.toMatchObject({
      code: 'invalid-input',
      message: expect.stringContaining('2048'),
      details: { field: 'input[1].image', limit: 2_048, size: 2_049, unit: 'chars', part: 1 },
    });
  });

  it('keeps an https: image URL at the limit as the stored part', async () => {
    const url = urlOf(2_048);
    const read = await readRunInput([{ type: 'image', image: url, detail: 'low' }], limits);

    expect(read.message.content).toEqual([{ type: 'image', url, detail: 'low' }]);
    expect(read.attachments).toEqual([]);
  });

  it('refuses a huge URL before reading anything else of the input', async () => {
    const refused = readRunInput(
      [
        { type: 'image', image: urlOf(10_000_000) },
        { type: 'image', image: 'data:image/png;base64,not-base64' },
      ],
      limits,
    );

    await expect(refused).rejects.toMatchObject({ code: 'invalid-input', details: { part: 0 } });
  });
});
