// `npm run bench:lab:first-text`: time to the first text delta, Airlock against the raw loop in
// a worker, with many runs per page (ten measured after a warm-up) rather than the peers
// bench's three. A quick check of a change to the path to the first token (about 30 s); its
// figures are printed, not written: the verdicts are the peers bench's.
//
// With `--against=<revision>`, Airlock as that revision's src/ has it runs too, its pages
// alternating with the working tree's in the same run. Runs made minutes apart on a shared
// 2-core machine differ by more than most changes to this path; pages a few seconds apart
// do not, so this is how a change of a millisecond or less is told from noise.
//
//   npm run bench:lab:first-text                 4 pages per contestant, alternating
//   npm run bench:lab:first-text -- --pages=8
//   npm run bench:lab:first-text -- --against=HEAD~1 --pages=8
//   npm run bench:lab:first-text -- --warm --against=HEAD~1   each page's runs one conversation
//   npm run bench:lab:first-text -- --fresh --pages=20        each page's second run only
//   npm run bench:lab:first-text -- --latency=50 --against=HEAD~1   each reply 50 ms late
//   npm run bench:lab:first-text -- --phases                  where the time goes, per phase
//
// `--warm` makes each page's runs the turns of one conversation, so Airlock's runs after the
// first build on a stored history. The raw loop keeps none and sends each run alone, so
// Airlock's excess over it is no target there: compare Airlock with a revision of itself.
//
// `--fresh` keeps each page's second run alone, which the peers bench reports apart from its
// figure (runs 2, 4 and 5 of each page): V8 compiles again then the stream path it optimised during
// the warm-up. It is slower and noisier than the later runs, so give it more pages.
//
// `--latency=<ms>` holds every reply back that long before its headers, as a model's time
// to its first token does. The input's write then overlaps the wait instead of competing for
// the machine's two cores with the server and the browser, as it does at zero latency: what
// is left is what a real network sees of the path to the first token. Times include the
// latency.
//
// `--phases` also times each run's way through its worker (see first-text-phases.mjs):
// the conversation's lock, the request, the input's write, the headers, the first text sent.
import { chromium } from 'playwright';
import { createServer } from 'vite';
import { chromiumArgs, chromiumPath } from '../../scripts/chromium.mjs';
import { startModelServerProcess } from '../lib/model-server-process.mjs';
import { openBenchPage, run, setUp, verify } from '../lib/peers-driver.mjs';
import { repoRoot, sharedConfig } from '../lib/vite-setup.mjs';
import { PHASES, phaseTable, probeLoopWorker, takePhases } from './first-text-phases.mjs';
import { exportSource, option, pagesOption, servePageFrom } from './revision-builds.mjs';

/** @typedef {import('../peers/roster').ContestantName} ContestantName */
/** @typedef {{ label: string; contestant: ContestantName; origin: string }} Entrant */

/** Runs per page, the first of which warms the page up and is not kept. */
const RUNS_PER_PAGE = process.argv.includes('--fresh') ? 2 : 11;
const pages = pagesOption(4);
const against = option('against');
const warm = process.argv.includes('--warm');
const phases = process.argv.includes('--phases');
const latency = option('latency');
if (latency !== undefined && !/^\d+$/.test(latency))
  throw new Error(`--latency must be a whole number of milliseconds (got ${latency}).`);

const shared = await sharedConfig();
const cache = new URL('../../node_modules/.airlock-first-text/', import.meta.url).pathname;

/**
 * Builds and serves the peers page with Airlock's entries resolved into `srcDir`.
 * @param {string} name
 * @param {string} srcDir
 */
const servePeers = (name, srcDir) =>
  servePageFrom({ shared, outDir: `${cache}${name}`, page: 'peers', srcDir });

const workTree = await servePeers('work-tree', `${repoRoot}src/`);
const servers = [workTree.server];
/** @type {Entrant[]} */
const entrants = [{ label: 'airlock', contestant: 'airlock', origin: workTree.origin }];
if (against) {
  const { commit, srcDir } = exportSource(against, cache);
  const other = await servePeers(`at-${commit}`, srcDir);
  servers.push(other.server);
  entrants.push({ label: `airlock@${commit}`, contestant: 'airlock', origin: other.origin });
}
entrants.push({ label: 'raw-worker', contestant: 'raw-worker', origin: workTree.origin });

const loader = await createServer({ ...shared, server: { middlewareMode: true } });
const { FULL_SCENARIO } = await loader.ssrLoadModule('/peers/scenario.ts');
const scenario =
  latency === undefined ? FULL_SCENARIO.name : `${FULL_SCENARIO.name}-latency-${latency}`;
const { summarize } = await loader.ssrLoadModule('/stats.ts');
const modelServer = await startModelServerProcess();
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
  headless: true,
});
/** @type {Record<string, number[]>} */
const firstText = Object.fromEntries(entrants.map(({ label }) => [label, []]));
/** @type {Record<string, Partial<Record<(typeof PHASES)[number], number>>[]>} */
const phasesOf = Object.fromEntries(entrants.map(({ label }) => [label, []]));
try {
  for (let round = 0; round < pages; round++) {
    for (const { label, contestant, origin } of entrants) {
      const url = `${origin}/peers/index.html?model=${encodeURIComponent(modelServer.url)}${warm ? '&conversation=one' : ''}`;
      const { page } = await openBenchPage(browser, url);
      try {
        await setUp(
          page,
          contestant,
          Array.from({ length: RUNS_PER_PAGE }, () => scenario),
        );
        const worker = phases ? await probeLoopWorker(page) : undefined;
        for (let index = 0; index < RUNS_PER_PAGE; index++) {
          const sample = await run(page, contestant);
          await verify(page, contestant);
          const runPhases = worker && (await takePhases(page, worker, contestant));
          // The first run of each page warms it up.
          if (index === 0) continue;
          firstText[label]?.push(sample.firstTextMs);
          if (runPhases) phasesOf[label]?.push(runPhases);
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
  for (const server of servers) await server.close();
}

/** @type {Record<string, import('../stats').Summary>} */
const summaries = Object.fromEntries(
  entrants.map(({ label }) => [label, summarize(firstText[label] ?? [])]),
);
const width = Math.max(...entrants.map(({ label }) => label.length));
for (const { label } of entrants) {
  const { p50, p95, min, max, n } = summaries[label] ?? summarize([]);
  console.log(
    `${label.padEnd(width)}  first text ${p50} ms p50 (${min}–${max}, p95 ${p95}; ${n} runs)`,
  );
}
if (phases) for (const line of phaseTable(phasesOf, firstText, summarize)) console.log(line);
const raw = summaries['raw-worker']?.p50 ?? Number.NaN;
for (const { label } of entrants.filter((entrant) => entrant.contestant === 'airlock')) {
  const excess = (summaries[label]?.p50 ?? Number.NaN) - raw;
  console.log(
    `${label} − raw loop in a worker: ${excess.toFixed(1)} ms${warm ? ' (not like for like: the raw loop sends no history)' : ' (bound +3)'}`,
  );
}
