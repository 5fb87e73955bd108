// The demo's production server, shared by `npm run demo:serve` (scripts/demo-serve.mjs)
// and the end-to-end test: serves a built demo (`demo/dist`) and mounts the model endpoint
// at /llm/v1, chosen as on the dev server (the proxy with OPENAI_API_KEY, else the
// offline model), and the notes MCP server's proxy route at /mcp/notes. Plain Node; the
// endpoint is TypeScript, loaded by Vite's module runner.
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runnerImport } from 'vite';

/** Where the endpoint is mounted; the page's default base URL. */
const MODEL_PATH = '/llm/v1';

/** @type {Readonly<Record<string, string>>} */
const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * @typedef {object} DemoServerOptions
 * @property {string} root The built demo (the directory holding index.html).
 * @property {number} [port] 0 picks a free port (default 4173).
 * @property {string} [host] Default 127.0.0.1.
 * @property {Readonly<Record<string, string | undefined>>} [env] Read for OPENAI_API_KEY,
 *   OPENAI_BASE_URL and AIRLOCK_MODEL (default `process.env`).
 */

/**
 * @typedef {object} DemoServer
 * @property {string} url The page's URL, e.g. `http://127.0.0.1:4173/`.
 * @property {string} model The model the page asks for.
 * @property {string} description What answers /llm/v1, in a sentence (never the key).
 * @property {() => Promise<void>} close Stops the server and ends open streams.
 */

/**
 * Starts the server; resolves once it listens.
 * @param {DemoServerOptions} options
 * @returns {Promise<DemoServer>}
 */
export async function startDemoServer({
  root,
  port = 4173,
  host = '127.0.0.1',
  env = process.env,
}) {
  const base = resolve(root);
  const indexHtml = await readFile(join(base, 'index.html'), 'utf8').catch((error) => {
    throw new Error(`No built demo at ${base} (run \`npm run demo:build\` first).`, {
      cause: error,
    });
  });
  const endpointModule = fileURLToPath(
    new URL('../demo/server/model-endpoint.ts', import.meta.url),
  );
  /** @type {{ module: typeof import('../demo/server/model-endpoint.js') }} */
  const { module } = await runnerImport(endpointModule, { configFile: false, logLevel: 'warn' });
  const endpoint = module.createModelEndpoint(env);
  /** @type {{ module: typeof import('../demo/server/notes-mcp.js') }} */
  const { module: notesModule } = await runnerImport(
    fileURLToPath(new URL('../demo/server/notes-mcp.ts', import.meta.url)),
    { configFile: false, logLevel: 'warn' },
  );
  const notes = await notesModule.startNotesMcp();
  const mcpPath = notesModule.MCP_PATH;
  // The model is written into the page here, so one build serves either endpoint.
  const page = module.injectServedModel(indexHtml, endpoint.model);

  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (pathname === MODEL_PATH || pathname.startsWith(`${MODEL_PATH}/`)) {
      endpoint.listener(req, res);
      return;
    }
    if (pathname.startsWith(`${mcpPath}/`)) {
      notes.listener(req, res);
      return;
    }
    serveStatic(base, pathname, page, req.method ?? 'GET', res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('Internal server error');
    });
  });
  await new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done(undefined));
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address !== null ? address.port : port;
  return {
    url: `http://${host}:${actualPort}/`,
    model: endpoint.model,
    description: endpoint.description,
    close: () =>
      new Promise((done) => {
        endpoint.close();
        void notes.close();
        server.close(() => done(undefined));
        // Keep-alive and streaming connections would otherwise hold `close` open.
        server.closeAllConnections();
      }),
  };
}

/**
 * Answers a GET or HEAD for a file of the build.
 * @param {string} base
 * @param {string} pathname
 * @param {string} page index.html with the model written in
 * @param {string} method
 * @param {import('node:http').ServerResponse} res
 */
async function serveStatic(base, pathname, page, method, res) {
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' });
    res.end('Method not allowed');
    return;
  }
  if (pathname === '/' || pathname === '/index.html') {
    res.writeHead(200, {
      'content-type': CONTENT_TYPES['.html'] ?? 'text/html',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    res.end(method === 'HEAD' ? undefined : page);
    return;
  }
  const file = fileOf(base, pathname);
  const info = file === undefined ? undefined : await stat(file).catch(() => undefined);
  if (file === undefined || !info?.isFile()) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('Not found');
    return;
  }
  const assets = pathname.startsWith('/assets/');
  res.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': String(info.size),
    'x-content-type-options': 'nosniff',
    // Vite puts a content hash in every asset name, so an asset never changes.
    'cache-control': assets ? 'public, max-age=31536000, immutable' : 'no-cache',
    // The iframe-tier tool worker runs in an opaque origin and imports its bundle and
    // chunks with `Origin: null`; without this it cannot load (`toolset-unavailable`).
    ...(assets ? { 'access-control-allow-origin': '*' } : {}),
  });
  if (method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file).pipe(res);
}

/**
 * The file under `base` that `pathname` names, or undefined when it would leave `base`.
 * @param {string} base
 * @param {string} pathname
 */
function fileOf(base, pathname) {
  let decoded;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const file = normalize(join(base, decoded));
  return file.startsWith(base + sep) ? file : undefined;
}
