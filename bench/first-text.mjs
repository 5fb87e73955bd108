// `npm run bench:first-text`: time to the first text delta, Airlock against the raw loop in
// a worker, with many runs per page (ten measured after a warm-up) rather than the peers
// bench's one. A quick check of a change to the path to the first token (about 30 s); its
// figures are printed, not written: the verdicts are the peers bench's.
//
//   npm run bench:first-text                 4 pages per contestant, alternating
//   npm run bench:first-text -- --pages=8
import { chromium } from 'playwright';
import { build, createServer, preview } from 'vite';
import { chromiumArgs, chromiumPath } from '../scripts/chromium.mjs';
import { startModelServerProcess } from './lib/model-server-process.mjs';
import { openBenchPage, run, setUp, verify } from './lib/peers-driver.mjs';
import { sharedConfig } from './lib/vite-setup.mjs';

/** @typedef {import('./peers/roster').ContestantName} ContestantName */

const RUNS_PER_PAGE = 11;
const pages = Number(
  /^--pages=(\d+)$/.exec(process.argv.find((arg) => arg.startsWith('--pages=')) ?? '')?.[1] ?? 4,
);
/** @type {ContestantName[]} */
const names = ['airlock', 'raw-worker'];

const shared = await sharedConfig();
const outDir = new URL('../node_modules/.airlock-first-text', import.meta.url).pathname;
await build({
  ...shared,
  logLevel: 'warn',
  build: {
    outDir,
    emptyOutDir: true,
    chunkSizeWarningLimit: 4_000,
    rollupOptions: { input: { peers: 'bench/peers/index.html' } },
  },
});
const server = await preview({
  ...shared,
  build: { outDir },
  preview: { host: '127.0.0.1', port: 0 },
});
const origin = server.resolvedUrls?.local[0]?.replace(/\/$/, '') ?? '';
const loader = await createServer({ ...shared, server: { middlewareMode: true } });
const { FULL_SCENARIO } = await loader.ssrLoadModule('/peers/scenario.ts');
const { summarize } = await loader.ssrLoadModule('/stats.ts');
const modelServer = await startModelServerProcess();
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
  headless: true,
});
const url = `${origin}/peers/index.html?model=${encodeURIComponent(modelServer.url)}`;
/** @type {Record<string, number[]>} */
const firstText = Object.fromEntries(names.map((name) => [name, []]));
try {
  for (let round = 0; round < pages; round++) {
    for (const name of names) {
      const { page } = await openBenchPage(browser, url);
      try {
        await setUp(
          page,
          name,
          Array.from({ length: RUNS_PER_PAGE }, () => FULL_SCENARIO.name),
        );
        for (let index = 0; index < RUNS_PER_PAGE; index++) {
          const sample = await run(page, name);
          await verify(page, name);
          // The first run of each page warms it up.
          if (index > 0) firstText[name]?.push(sample.firstTextMs);
        }
      } finally {
        await page.close();
      }
    }
  }
} finally {
  await browser.close();
  await modelServer.close();
  await loader.close();
  await server.close();
}

/** @type {Record<string, import('./stats').Summary>} */
const summaries = Object.fromEntries(names.map((name) => [name, summarize(firstText[name] ?? [])]));
for (const name of names) {
  const { p50, p95, min, max, n } = summaries[name] ?? summarize([]);
  console.log(`${name.padEnd(11)} first text ${p50} ms p50 (${min}–${max}, p95 ${p95}; ${n} runs)`);
}
const excess =
  (summaries.airlock?.p50 ?? Number.NaN) - (summaries['raw-worker']?.p50 ?? Number.NaN);
console.log(`Airlock − raw loop in a worker: ${excess.toFixed(1)} ms (bound +3)`);
