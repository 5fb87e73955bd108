// Builds Airlock's page and worker entries the way an app's bundler would (everything
// inlined, minified), so tests and the size report measure what a user ships.

import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The entries an app puts on the page and in its agent worker. */
export const ENTRIES = {
  page: 'src/index.ts',
  worker: 'src/worker.ts',
};

/**
 * Bundles one entry alone and returns its code with raw and gzip sizes in bytes.
 * @param {keyof typeof ENTRIES} name
 * @returns {Promise<{ code: string; bytes: number; gzipBytes: number }>}
 */
export async function bundleEntry(name) {
  const output = await build({
    root,
    configFile: false,
    logLevel: 'silent',
    build: {
      write: false,
      minify: true,
      target: 'es2022',
      lib: { entry: ENTRIES[name], formats: ['es'], fileName: name },
      rollupOptions: { treeshake: true },
    },
  });
  const results = Array.isArray(output) ? output : [output];
  const code = results
    .flatMap((result) => ('output' in result ? result.output : []))
    .map((chunk) => (chunk.type === 'chunk' ? chunk.code : ''))
    .join('\n');
  return { code, bytes: Buffer.byteLength(code), gzipBytes: gzipSync(code).length };
}
