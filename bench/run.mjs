// `npm run bench`: builds the bench pages for production, serves them with Vite's preview
// server, drives Debian's Chromium headless through them, writes the figures to
// bench/results/ and BENCHMARKS.md. Not a test: nothing here passes or fails on a number,
// but a contestant that does not finish its scenario makes the command fail.
//
//   npm run bench                   every page (peers, sandbox, code, memory, knowledge), then BENCHMARKS.md
//   npm run bench -- peers memory   only the named pages
//   npm run bench -- --runs=9       measured runs per contestant (default 5)
//   npm run bench:smoke             (--smoke) a tiny conversation, one run of each
//                                   contestant, one pass of the code page, no files written;
//                                   fails if one does not finish
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { build, createServer, preview } from 'vite';
import { ensureBrowsers, selectedBrowsers } from '../scripts/browsers.mjs';
import { chromiumArgs, chromiumPath } from '../scripts/chromium.mjs';
import { measureBundles } from './lib/bundle-sizes.mjs';
import { runPageIn } from './lib/engine-page.mjs';
import { describeMachine, packageVersions } from './lib/machine.mjs';
import { runSelfMeasuringPage } from './lib/page-bench.mjs';
import { DELIVERY_EVENTS, runContestants, runDelivery } from './lib/peers-driver.mjs';
import { deliverySummary, perStepOverhead, summarizeFields } from './lib/peers-results.mjs';
import { sharedConfig } from './lib/vite-setup.mjs';
import { writeReport } from './report.mjs';

const PAGES = ['peers', 'sandbox', 'code', 'memory', 'knowledge'];
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const runs = Number(
  /^--runs=(\d+)$/.exec(args.find((arg) => arg.startsWith('--runs=')) ?? '')?.[1] ?? 5,
);
const chosen = args.filter((arg) => !arg.startsWith('--'));
const pages = smoke
  ? ['peers', 'code']
  : PAGES.filter((name) => chosen.length === 0 || chosen.includes(name));
const started = performance.now();
const loadAtStart = loadavg();
const log = (/** @type {string} */ line) => console.log(line);

const shared = await sharedConfig();
const outDir = fileURLToPath(new URL('../node_modules/.airlock-bench', import.meta.url));
log(`Building ${pages.join(', ')}…`);
await build({
  ...shared,
  build: {
    outDir,
    emptyOutDir: true,
    // The agents SDK's chunk is large; its size is reported, not warned about.
    chunkSizeWarningLimit: 4_000,
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
// The fake model server and the scenario are TypeScript; a throwaway Vite dev server loads them for Node.
const loader = await createServer({ ...shared, server: { middlewareMode: true } });
const { startModelServer } = await loader.ssrLoadModule('/../src/testing.ts');
const modelServer = await startModelServer();
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
  headless: true,
});

let failed = false;
try {
  if (!smoke) mkdirSync('bench/results', { recursive: true });
  for (const name of pages) {
    if (name === 'peers') {
      failed = !(await benchPeers()) || failed;
      continue;
    }
    log(`Running the ${name} bench…`);
    const results = {
      date: new Date().toISOString(),
      chromium: browser.version(),
      node: process.version,
      [name]: await runSelfMeasuringPage(browser, origin, modelServer.url, name, smoke),
    };
    if (smoke) {
      log(`The ${name} page finished: ${JSON.stringify(results[name])}`);
      continue;
    }
    writeFileSync(`bench/results/${name}.json`, `${JSON.stringify(results, null, 2)}\n`);
    log(`Wrote bench/results/${name}.json`);
    if (name === 'sandbox') await benchSandboxEngines(results.date, results.sandbox);
  }
} finally {
  await browser.close();
  await modelServer.close();
  await loader.close();
  await server.close();
}
if (!smoke) {
  writeReport();
  log('Wrote BENCHMARKS.md');
}
log(`${smoke ? 'Smoke' : 'Bench'} done in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
process.exit(failed ? 1 : 0);

/**
 * The sandbox page again in Firefox and WebKit (those `AIRLOCK_BROWSERS` selects), beside
 * Chromium's figures of this run: `bench/results/sandbox-engines.json`.
 * @param {string} date
 * @param {unknown} chromiumFigures
 */
async function benchSandboxEngines(date, chromiumFigures) {
  /** @type {Record<string, { version: string; figures: unknown }>} */
  const engines = { chromium: { version: browser.version(), figures: chromiumFigures } };
  const others = selectedBrowsers().filter((engine) => engine !== 'chromium');
  for (const engine of others) {
    if (!ensureBrowsers([engine])) continue;
    log(`Running the sandbox bench in ${engine}…`);
    const url = `${origin}/sandbox/index.html?model=${encodeURIComponent(modelServer.url)}`;
    engines[engine] = await runPageIn(/** @type {'firefox' | 'webkit'} */ (engine), url);
  }
  const results = { date, node: process.version, loadAverage: loadavg(), engines };
  writeFileSync('bench/results/sandbox-engines.json', `${JSON.stringify(results, null, 2)}\n`);
  log('Wrote bench/results/sandbox-engines.json');
}

/** The peers page; true when every contestant finished every run. */
async function benchPeers() {
  const { ROSTER } = await loader.ssrLoadModule('/peers/roster.ts');
  const { summarize } = await loader.ssrLoadModule('/stats.ts');
  const scenarios = await loader.ssrLoadModule('/peers/scenario.ts');
  /** @type {import('./peers/roster').ContestantInfo[]} */
  const roster = ROSTER;
  const names = roster.map((contestant) => contestant.name);
  const url = `${origin}/peers/index.html?model=${encodeURIComponent(modelServer.url)}`;
  const scenario = smoke ? scenarios.SMOKE_SCENARIO : scenarios.FULL_SCENARIO;
  log(`Running the peers bench: ${scenario.description}, ${smoke ? 1 : runs} run(s) each…`);
  const conversation = await runContestants({
    browser,
    url,
    names,
    scenario: scenario.name,
    runs: smoke ? 1 : runs,
    quick: smoke,
    log,
  });
  if (smoke) {
    for (const failure of conversation.failures) {
      console.error(`${failure.contestant} did not finish the smoke scenario: ${failure.message}`);
    }
    const finished = names.length - conversation.failures.length;
    log(`${finished} of ${names.length} contestants finished the smoke scenario.`);
    return conversation.failures.length === 0;
  }
  log(`Measuring event delivery (${DELIVERY_EVENTS} events)…`);
  const delivery = await runDelivery({ browser, url, runs, log });
  log('Measuring bundle sizes…');
  const bundles = await measureBundles(shared.resolve.alias);

  const samplesOf = (/** @type {string} */ name) => conversation.samples[name] ?? [];
  const results = {
    date: new Date().toISOString(),
    machine: describeMachine(browser.version(), loadAtStart),
    versions: packageVersions(),
    scenario: {
      name: scenario.name,
      description: scenario.description,
      steps: scenario.steps,
      toolCalls: scenario.toolCalls,
      textDeltas: scenario.textDeltas,
      runs,
      runsPerPage: 'a warm-up, the measured run, a profiled run',
    },
    contestants: Object.fromEntries(
      roster.map((contestant) => [
        contestant.name,
        {
          ...contestant,
          summary: summarizeFields(samplesOf(contestant.name), summarize),
          samples: samplesOf(contestant.name),
        },
      ]),
    ),
    perStep: perStepOverhead(
      samplesOf('airlock'),
      samplesOf('raw-worker'),
      scenario.steps,
      summarize,
    ),
    delivery: {
      events: DELIVERY_EVENTS,
      summary: deliverySummary(delivery.samples, summarize),
      samples: delivery.samples,
    },
    bundles,
    failures: [...conversation.failures, ...delivery.failures],
  };
  writeFileSync('bench/results/peers.json', `${JSON.stringify(results, null, 2)}\n`);
  log('Wrote bench/results/peers.json');
  return results.failures.length === 0;
}
