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
  webmcp: 'src/webmcp.ts',
};

/**
 * Bundles one entry alone. `code` is every chunk; `bytes` and `gzipBytes` measure what
 * loads when the entry starts (its chunk and those it imports statically);
 * `lazyGzipBytes` the chunks only dynamic imports reach, loaded when a feature needs them.
 * @param {keyof typeof ENTRIES} name
 * @returns {Promise<{ code: string; bytes: number; gzipBytes: number; lazyGzipBytes: number }>}
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
      // Vite keeps the whitespace of an ES library build (for its pure annotations); an app's
      // bundler takes it out, so it is taken out here too.
      rollupOptions: { treeshake: true, output: { minify: true } },
    },
  });
  const results = Array.isArray(output) ? output : [output];
  const chunks = results
    .flatMap((result) => ('output' in result ? result.output : []))
    .flatMap((chunk) => (chunk.type === 'chunk' ? [chunk] : []));
  const atStart = new Set(startChunks(chunks));
  const start = [...atStart].map((chunk) => chunk.code).join('\n');
  const lazy = chunks.filter((chunk) => !atStart.has(chunk)).map((chunk) => chunk.code);
  return {
    code: chunks.map((chunk) => chunk.code).join('\n'),
    bytes: Buffer.byteLength(start),
    gzipBytes: gzipSync(start).length,
    lazyGzipBytes: lazy.reduce((sum, code) => sum + gzipSync(code).length, 0),
  };
}

/**
 * The chunks that load when the entry starts: the entry's and every chunk it imports
 * statically, at any depth.
 * @template {{ fileName: string; isEntry: boolean; imports: string[] }} C
 * @param {C[]} chunks
 * @returns {C[]}
 */
export function startChunks(chunks) {
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const start = new Set(chunks.filter((chunk) => chunk.isEntry));
  for (const chunk of start) {
    for (const name of chunk.imports) {
      const imported = byName.get(name);
      if (imported) start.add(imported);
    }
  }
  return [...start];
}
