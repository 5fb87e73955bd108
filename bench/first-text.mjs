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
import { sharedConfig } from './lib/vite-setup.mjs';

/** @typedef {import('./peers/roster').ContestantName} ContestantName */
/** @typedef {{ setUp(name: ContestantName, scenarios: readonly string[]): Promise<void>; run(name: ContestantName): Promise<{ firstTextMs: number }> }} BenchApi */
/** @typedef {typeof globalThis & { bench: BenchApi }} BenchPage */

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
const modelServer = await startModelServerProcess();
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
  headless: true,
});
/** @type {Record<string, number[]>} */
const firstText = Object.fromEntries(names.map((name) => [name, []]));
try {
  for (let round = 0; round < pages; round++) {
    for (const name of names) {
      const page = await browser.newPage();
      await page.goto(`${origin}/peers/index.html?model=${encodeURIComponent(modelServer.url)}`);
      await page.waitForFunction(() => 'benchReady' in globalThis, null, { timeout: 30_000 });
      await page.evaluate(
        ([contestant, scenario, count]) =>
          /** @type {BenchPage} */ (globalThis).bench.setUp(
            contestant,
            Array.from({ length: count }, () => scenario),
          ),
        /** @type {const} */ ([name, FULL_SCENARIO.name, RUNS_PER_PAGE]),
      );
      for (let run = 0; run < RUNS_PER_PAGE; run++) {
        const sample = await page.evaluate(
          (contestant) => /** @type {BenchPage} */ (globalThis).bench.run(contestant),
          name,
        );
        // The first run of each page warms it up.
        if (run > 0) firstText[name]?.push(sample.firstTextMs);
      }
      await page.close();
    }
  }
} finally {
  await browser.close();
  await modelServer.close();
  await loader.close();
  await server.close();
}

/** @param {number[]} samples @param {number} at */
const quantile = (samples, at) =>
  [...samples].sort((a, b) => a - b)[Math.floor((samples.length - 1) * at)] ?? Number.NaN;
const [airlock = [], raw = []] = names.map((name) => firstText[name] ?? []);
for (const name of names) {
  const samples = firstText[name] ?? [];
  console.log(
    `${name.padEnd(11)} first text ${quantile(samples, 0.5).toFixed(1)} ms median ` +
      `(${quantile(samples, 0.25).toFixed(1)}–${quantile(samples, 0.75).toFixed(1)} interquartile, ${samples.length} runs)`,
  );
}
console.log(
  `Airlock − raw loop in a worker: ${(quantile(airlock, 0.5) - quantile(raw, 0.5)).toFixed(1)} ms (bound +3)`,
);
