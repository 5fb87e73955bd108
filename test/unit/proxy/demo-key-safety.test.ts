import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';
import { describe, expect, it } from 'vitest';
import { sentinelKey } from './support';

/** Every file under `dir`, recursively. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Sets environment variables for the duration of `body`, restoring the previous values. */
async function withEnv<T>(values: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const previous = new Map(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  try {
    return await body();
  } finally {
    for (const [name, value] of previous) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

describe('the built demo', () => {
  it('contains the proxied model name but never the API key, in any bundle, worker chunk, HTML or map', async () => {
    const key = sentinelKey();
    const model = `airlock-sentinel-model-${randomBytes(6).toString('hex')}`;
    const outDir = await mkdtemp(join(tmpdir(), 'airlock-demo-build-'));
    try {
      await withEnv({ OPENAI_API_KEY: key, AIRLOCK_MODEL: model }, () =>
        build({
          configFile: 'demo/vite.config.ts',
          build: { outDir, emptyOutDir: true, write: true, sourcemap: true },
          logLevel: 'silent',
        }),
      );

      const files = await listFiles(outDir);
      const names = files.map((file) => file.slice(outDir.length + 1));
      // The scan covers what the page really loads: HTML, the page script, the worker, maps.
      expect(names).toContain('index.html');
      expect(names.some((name) => /agent\.worker.*\.js$/.test(name))).toBe(true);
      expect(names.some((name) => name.endsWith('.js.map'))).toBe(true);

      let modelFound = false;
      for (const file of files) {
        const content = await readFile(file, 'utf8');
        expect(content.includes(key), `${file} contains the API key`).toBe(false);
        expect(content.includes(key.slice(-12)), `${file} contains part of the key`).toBe(false);
        if (content.includes(model)) modelFound = true;
      }
      // The positive control: the scan reads the bundles, where the page's model name lives.
      expect(modelFound).toBe(true);
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  }, 60_000);
});
