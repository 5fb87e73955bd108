import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { loadChunk } from '../../../src/runtime/load-chunk';

/** What `loadChunk` rejected with, or a note that it resolved. */
async function failure(loading: Promise<unknown>): Promise<unknown> {
  return loading.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

describe('loadChunk', () => {
  it('resolves with the module the import gave', async () => {
    const module = { answer: 42 };
    expect(await loadChunk('answer', () => Promise.resolve(module))).toBe(module);
  });

  it("turns the browser's raw failure into worker-load-failed naming the chunk, the raw error kept as cause", async () => {
    const raw = new TypeError(
      'Failed to fetch dynamically imported module: https://app.example/assets/mcp-servers-3f9c.js',
    );
    const error = await failure(loadChunk('mcp-servers', () => Promise.reject(raw)));
    expect(isAirlockError(error, 'worker-load-failed')).toBe(true);
    expect(error).toMatchObject({
      details: { chunk: 'mcp-servers' },
      cause: raw,
      message: expect.stringContaining('`mcp-servers`'),
    });
    expect((error as Error).message).toContain('Failed to fetch dynamically imported module');
  });

  it('types a failure that is no Error at all, and one thrown before any promise exists', async () => {
    const rejected = await failure(loadChunk('search', () => Promise.reject('offline')));
    expect(rejected).toMatchObject({ code: 'worker-load-failed', details: { chunk: 'search' } });
    expect((rejected as Error).message).toContain('offline');
    const thrown = await failure(
      loadChunk('seal-keys', () => {
        throw new SyntaxError('Unexpected token <');
      }),
    );
    expect(thrown).toMatchObject({ code: 'worker-load-failed', details: { chunk: 'seal-keys' } });
  });

  it('loads again on the next call: a chunk that failed once is not remembered as failed', async () => {
    let calls = 0;
    const load = () =>
      ++calls === 1 ? Promise.reject(new TypeError('Load failed')) : Promise.resolve({ ok: true });
    expect(await failure(loadChunk('search', load))).toMatchObject({ code: 'worker-load-failed' });
    expect(await loadChunk('search', load)).toEqual({ ok: true });
  });
});
