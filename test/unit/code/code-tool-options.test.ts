import { describe, expect, it } from 'vitest';
import { codeTool } from '../../../src/code/code-tool';

describe('codeTool options', () => {
  it.each([['none'], [''], ['IFRAME'], [42], [null]])(
    'refuses isolation %j as invalid-options, naming the field',
    (isolation) => {
      expect(() =>
        codeTool({ name: 'run_js', description: 'Runs JavaScript.', isolation } as never),
      ).toThrow(
        expect.objectContaining({
          code: 'invalid-options',
          message: expect.stringContaining('isolation'),
        }),
      );
    },
  );

  it('refuses to prepare outside an opaque origin unless it accepts the worker tier', async () => {
    // Node has no `origin`: as far as the check goes, not an opaque one.
    const byDefault = codeTool({ name: 'run_js', description: 'Runs JavaScript.' });

    await expect(byDefault.prepare?.()).rejects.toMatchObject({
      code: 'tool-failed',
      message: expect.stringContaining("isolation: 'worker' in codeTool()"),
    });
  });
});
