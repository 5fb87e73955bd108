// `npm run bench`: serves the bench pages with Vite, drives Debian's Chromium headless
// through them, and writes the figures to bench/results/. Not a test: nothing here
// passes or fails on a number.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { build, createServer, loadConfigFromFile, preview } from 'vite';
import { chromiumArgs, chromiumPath } from '../scripts/chromium.mjs';

// The pages are measured as built for production (minified, bundled workers), as users ship them.
const loaded = await loadConfigFromFile({ command: 'build', mode: 'production' }, 'vite.config.ts');
const shared = {
  configFile: /** @type {false} */ (false),
  root: 'bench',
  logLevel: /** @type {const} */ ('warn'),
  resolve: { alias: loaded?.config.resolve?.alias ?? [] },
  worker: { format: /** @type {const} */ ('es') },
};
/** Each bench page, by name; `npm run bench -- memory` runs only the named ones. */
const PAGES = ['sandbox', 'memory'];
const chosen = process.argv.slice(2);
const pages = chosen.length > 0 ? PAGES.filter((name) => chosen.includes(name)) : PAGES;
const outDir = fileURLToPath(new URL('../node_modules/.airlock-bench', import.meta.url));
await build({
  ...shared,
  build: {
    outDir,
    emptyOutDir: true,
    rollupOptions: {
      input: Object.fromEntries(pages.map((name) => [name, `bench/${name}/index.html`])),
    },
  },
});
const server = await preview({
  ...shared,
  build: { outDir },
  // The iframe tier's opaque-origin worker loads its bundle with Origin: null.
  preview: { host: '127.0.0.1', port: 0, cors: { origin: '*' } },
});
const origin = server.resolvedUrls?.local[0]?.replace(/\/$/, '') ?? '';
// The fake model server is TypeScript; a throwaway Vite dev server loads it for Node.
const loader = await createServer({ ...shared, server: { middlewareMode: true } });
const { startModelServer } = await loader.ssrLoadModule('/../src/testing.ts');
const modelServer = await startModelServer();
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
  headless: true,
});

try {
  mkdirSync('bench/results', { recursive: true });
  for (const name of pages) {
    const page = await browser.newPage();
    await page.goto(`${origin}/${name}/index.html?model=${encodeURIComponent(modelServer.url)}`);
    await page.waitForFunction(
      () => 'benchResults' in globalThis || 'benchError' in globalThis,
      null,
      {
        timeout: 1_200_000,
      },
    );
    const error = await page.evaluate(
      () => /** @type {{ benchError?: string }} */ (globalThis).benchError,
    );
    if (error) throw new Error(`The ${name} bench failed in the page: ${error}`);
    const results = {
      date: new Date().toISOString(),
      chromium: browser.version(),
      node: process.version,
      [name]: await page.evaluate(
        () => /** @type {{ benchResults?: unknown }} */ (globalThis).benchResults,
      ),
    };
    writeFileSync(`bench/results/${name}.json`, `${JSON.stringify(results, null, 2)}\n`);
    console.log(JSON.stringify(results, null, 2));
    console.log(`Wrote bench/results/${name}.json`);
    await page.close();
  }
} finally {
  await browser.close();
  await modelServer.close();
  await loader.close();
  await server.close();
}
