// Browser commands for tests of a built agent worker (`test/browser/lazy-chunk.test.ts`):
// the fixture agent worker built with Vite as an app would build it, one chunk per lazy
// `import()`, served from an HTTP server that answers 404 for the chunks a test leaves out,
// as a deploy that replaced the files under an open page would. The build is made once per
// vitest process; each test gets a server of its own and closes it.
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** @type {Promise<string> | undefined} */
let built;
/** @type {Map<string, { close: () => Promise<void>; refused: string[] }>} */
const servers = new Map();

/** Builds the fixture agent worker once: `agent-worker.js` and its chunks under `assets/`. */
function buildOnce() {
  built ??= (async () => {
    const { build } = await import('vite');
    const outDir = await mkdtemp(join(tmpdir(), 'airlock-built-worker-'));
    process.once('exit', () => void rm(outDir, { recursive: true, force: true }));
    await build({
      configFile: false,
      envDir: false,
      publicDir: false,
      logLevel: 'warn',
      root: repoRoot,
      resolve: {
        alias: [{ find: /^airlock-agents\/worker$/, replacement: join(repoRoot, 'src/worker.ts') }],
      },
      build: {
        outDir,
        emptyOutDir: true,
        minify: false,
        target: 'es2022',
        // Library mode, as Vite builds a worker: no preload helper (it reaches for `window`).
        lib: {
          entry: join(repoRoot, 'test/browser/fixtures/agent.worker.ts'),
          formats: ['es'],
          fileName: () => 'agent-worker.js',
        },
        rollupOptions: { output: { chunkFileNames: 'assets/[name]-[hash].js' } },
      },
    });
    return outDir;
  })();
  return built;
}

/**
 * Serves the built agent worker, every chunk whose name is in `without` answered 404 (a
 * chunk `mcp-servers` is the file `assets/mcp-servers-<hash>.js`), or with `answer: 'html'`
 * answered 200 with an HTML page, as a single-page app's server does for any unknown path.
 * Cross-origin with CORS:
 * the test starts it from a same-origin blob module that imports the entry. Throws when a
 * name in `without` matches no chunk, so a renamed module cannot make the test pass vacuously.
 * @param {unknown} _context
 * @param {readonly string[]} without
 * @param {'404' | 'html'} [answer]
 * @returns {Promise<{ entryUrl: string; missing: string[] }>}
 */
export async function serveBuiltAgentWorker(_context, without, answer = '404') {
  const outDir = await buildOnce();
  const chunks = await readdir(join(outDir, 'assets'));
  const chunkName = (/** @type {string} */ file) => file.replace(/-[\w-]{8}\.js$/, '');
  const missing = chunks.filter((file) => without.includes(chunkName(file)));
  const unmatched = without.filter((name) => !missing.some((file) => chunkName(file) === name));
  if (unmatched.length > 0)
    throw new Error(`No chunk of the built agent worker is named ${unmatched.join(', ')}.`);
  /** @type {string[]} */
  const refused = [];
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    response.setHeader('Access-Control-Allow-Origin', '*');
    const file = path === '/agent-worker.js' ? 'agent-worker.js' : path.slice(1);
    const known = file === 'agent-worker.js' || chunks.includes(basename(file));
    if (!known || !/^(assets\/)?[\w.-]+\.js$/.test(file) || missing.includes(basename(file))) {
      if (known) refused.push(basename(file));
      if (known && answer === 'html')
        response
          .writeHead(200, { 'Content-Type': 'text/html' })
          .end('<!doctype html><title>App</title><div id="app"></div>');
      else response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
      return;
    }
    response.writeHead(200, { 'Content-Type': 'text/javascript' });
    createReadStream(join(outDir, file)).pipe(response);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const entryUrl = `http://127.0.0.1:${port}/agent-worker.js`;
  servers.set(entryUrl, {
    refused,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      }),
  });
  return { entryUrl, missing: missing.map(chunkName) };
}

/**
 * Closes the server of `entryUrl` and lists the chunk files it answered 404 for.
 * @param {unknown} _context
 * @param {string} entryUrl
 * @returns {Promise<string[]>}
 */
export async function closeBuiltAgentWorker(_context, entryUrl) {
  const served = servers.get(entryUrl);
  if (!served) return [];
  servers.delete(entryUrl);
  await served.close();
  return served.refused;
}
