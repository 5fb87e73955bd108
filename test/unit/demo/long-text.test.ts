// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { COLLAPSE_CHARS, isLongText } from '../../../demo/views/long-text';

describe('which messages the log shows collapsed', () => {
  it('collapses a 50,000-character message and one of many short lines, not a paragraph', () => {
    expect(isLongText('x'.repeat(50_000))).toBe(true);
    expect(isLongText('line\n'.repeat(30))).toBe(true);
    expect(isLongText('What is the weather in Paris and Oslo?')).toBe(false);
    expect(isLongText('y'.repeat(COLLAPSE_CHARS))).toBe(false);
    expect(isLongText('y'.repeat(COLLAPSE_CHARS + 1))).toBe(true);
  });
});
