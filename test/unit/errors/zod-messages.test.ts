// No classic zod in this file, on purpose: it loads zod's English messages as its first schema
// is made, and `src/` uses `zod/mini`, which loads no locale. Every message asserted here would
// read "Invalid input" if `src/` did not load them itself.
import { describe, expect, it } from 'vitest';
import { z } from 'zod/mini';
import { parseOrThrow } from '../../../src/errors/schema-issues';
import { createMemoryStore } from '../../../src/store/memory-store';
import { rowProblems } from '../../../src/store/row-schemas';
import { runTool } from '../../../src/tools/run-tool';
import { memoryTools } from '../../../src/worker/tools/memory-tools';

describe("zod's messages under zod/mini", () => {
  it('start with no locale loaded, so the tests below can fail', () => {
    expect(z.config().localeError).toBeUndefined();
    expect(z.string().safeParse(1).error?.issues[0]?.message).toBe('Invalid input');
  });

  it('are English in a failed option check', () => {
    const schema = z.object({ name: z.string().check(z.minLength(1)), size: z.int() });
    expect(() =>
      parseOrThrow(schema, { name: '', size: 'big' }, 'The options are not valid'),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid-options',
        message:
          'The options are not valid: `name`: Too small: expected string to have >=1 characters; `size`: Invalid input: expected number, received string.',
      }),
    );
  });

  it('are English in a stored row found wrong', () => {
    expect(rowProblems('conversations', { id: '', title: 7 })).toEqual(
      expect.arrayContaining([
        'id: Too small: expected string to have >=1 characters',
        'title: Invalid input: expected string, received number',
      ]),
    );
  });

  it('are English in what the model is told of its bad arguments, huge or of the wrong type', async () => {
    const store = createMemoryStore({ name: `zod-messages-${crypto.randomUUID()}` });
    const [save] = memoryTools(store, { conversation: 'conversation:c1', lasting: 'global' });
    if (!save) throw new Error('no save_memory tool');
    const outcome = await runTool(
      save,
      {
        callId: 'call_1',
        toolName: save.name,
        arguments: { key: 'k'.repeat(1_000_000), content: 7 },
      },
      new AbortController().signal,
    );
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: 'tool-invalid-arguments',
        message: expect.stringMatching(
          /key: Too big: expected string to have <=200 characters.*content: Invalid input: expected string, received number/s,
        ),
      },
    });
    expect(await store.listMemories()).toEqual([]);
  });
});
