import { describe, expect, it } from 'vitest';
import { estimateRequestTokens } from '../../../src/model/estimate-tokens';

describe('estimateRequestTokens', () => {
  it('counts an image sent as a data URL as a fixed 1 000 tokens, not its base64 as text', () => {
    const photo = `data:image/jpeg;base64,${'A'.repeat(1_400_000)}`;
    const withImage = estimateRequestTokens({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', url: photo },
          ],
        },
      ],
      tools: [],
    });
    const textOnly = estimateRequestTokens({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }] }],
      tools: [],
    });
    expect(withImage - textOnly).toBeGreaterThanOrEqual(1_000);
    expect(withImage - textOnly).toBeLessThan(1_020);
  });
});
