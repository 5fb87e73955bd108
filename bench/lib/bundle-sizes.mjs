// What each contestant puts on the page (and in its worker), built alone the way an app's
// bundler would: minified, tree-shaken, `process.env.NODE_ENV` set to production, browser
// export conditions. Like scripts/bundle-entries.mjs, with the bench's aliases and plugin.
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { ENTRIES, startChunks } from '../../scripts/bundle-entries.mjs';
import { agentsOpenAIPlugin, repoRoot } from './vite-setup.mjs';

/**
 * A bundle's size in bytes, with its largest parts: a package, or one of the repository's
 * files, each with its share of the bundle (by size before minification) and that share
 * of the bundle's gzip bytes, an estimate.
 * @typedef {{ bytes: number; gzipBytes: number; chunks: number; largest: { module: string; share: number; gzipBytes: number }[] }} BundleSize
 */

/** How many of a bundle's largest modules are listed. */
const LARGEST = 8;

/**
 * Bundles one file alone; all its chunks (lazy ones included) are counted, or with
 * `atStart` only what loads when the entry starts (its chunk and those it imports
 * statically), gzipped together, as `npm run size` counts a library entry.
 * @param {string} entry a path from the repository root
 * @param {{ alias: import('vite').AliasOptions; external?: RegExp[]; atStart?: boolean }} options
 * @returns {Promise<BundleSize>}
 */
async function bundleFile(entry, { alias, external = [], atStart = false }) {
  const output = await build({
    root: repoRoot,
    configFile: false,
    logLevel: 'silent',
    resolve: { alias },
    plugins: [agentsOpenAIPlugin()],
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    build: {
      write: false,
      minify: true,
      target: 'es2022',
      lib: { entry, formats: ['es'], fileName: 'entry' },
      // Vite keeps the whitespace of an ES library build; an app's bundler takes it out.
      rollupOptions: { treeshake: true, external, output: { minify: true } },
    },
  });
  const results = Array.isArray(output) ? output : [output];
  const allChunks = results
    .flatMap((result) => ('output' in result ? result.output : []))
    .flatMap((chunk) => (chunk.type === 'chunk' ? [chunk] : []));
  const chunks = atStart ? startChunks(allChunks) : allChunks;
  // Module sizes are known only before minification: each part (a package, or one of the
  // repository's files) gets its share of the bundle by that measure.
  /** @type {Map<string, number>} */
  const rendered = new Map();
  for (const [id, module] of chunks.flatMap((chunk) => Object.entries(chunk.modules))) {
    const name = packageOrFile(id);
    rendered.set(name, (rendered.get(name) ?? 0) + module.renderedLength);
  }
  const total = [...rendered.values()].reduce((sum, bytes) => sum + bytes, 0);
  const gzipBytes = atStart
    ? gzipSync(chunks.map((chunk) => chunk.code).join('\n')).length
    : chunks.reduce((sum, chunk) => sum + gzipSync(chunk.code).length, 0);
  const largest = [...rendered]
    .map(([module, bytes]) => ({
      module,
      share: bytes / total,
      gzipBytes: Math.round((bytes / total) * gzipBytes),
    }))
    .sort((a, b) => b.share - a.share)
    .slice(0, LARGEST);
  // Gzip per chunk, as a server sends them.
  return {
    bytes: chunks.reduce((total, chunk) => total + Buffer.byteLength(chunk.code), 0),
    gzipBytes,
    chunks: chunks.length,
    largest,
  };
}

/**
 * A module's package (`openai`, `@openai/agents-core`) or, for the repository's own code,
 * its path.
 * @param {string} id
 */
function packageOrFile(id) {
  const path = id.replaceAll('\\', '/').replace(/^\0/, '').split('?')[0] ?? id;
  const inPackage = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (inPackage?.[1]) return inPackage[1];
  return path.startsWith(repoRoot) ? path.slice(repoRoot.length).replace(/^\//, '') : path;
}

/** zod and its subpaths, left out to show a contestant's size without the schema library. */
const ZOD = [/^zod($|\/)/];

/**
 * Sizes of every contestant's page code (its module in bench/peers/contestants, which is
 * exactly what runs in the bench, with and without zod) and worker code, plus Airlock's
 * library entries alone (what the targets are about).
 * @param {import('vite').AliasOptions} alias
 */
export async function measureBundles(alias) {
  const contestant = (/** @type {string} */ name) => `bench/peers/contestants/${name}.ts`;
  /** @type {Record<string, { page: BundleSize; pageWithoutZod: BundleSize; worker?: BundleSize }>} */
  const contestants = {};
  for (const name of ['airlock', 'vercel-ai', 'openai-agents', 'raw-page', 'raw-worker']) {
    contestants[name] = {
      page: await bundleFile(contestant(name), { alias }),
      pageWithoutZod: await bundleFile(contestant(name), { alias, external: ZOD }),
    };
  }
  const library = {
    page: await bundleFile(ENTRIES.page, { alias, atStart: true }),
    worker: await bundleFile(ENTRIES.worker, { alias, atStart: true }),
  };
  /** @type {{ airlock: BundleSize; 'raw-worker': BundleSize }} */
  const workers = {
    // Like every contestant's, with its lazy chunks.
    airlock: await bundleFile(ENTRIES.worker, { alias }),
    'raw-worker': await bundleFile('bench/peers/workers/raw-loop.worker.ts', { alias }),
  };
  for (const [name, size] of Object.entries(workers)) {
    const entry = contestants[name];
    if (entry) entry.worker = size;
  }
  return { contestants, airlockLibrary: library };
}
