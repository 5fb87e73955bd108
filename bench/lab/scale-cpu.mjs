// `npm run bench:lab:scale-cpu`: the agent worker's CPU time per run in the scale page's bursts
// (20 runs at once on one agent, each stream paced by the server), against the hand-written
// loop's in a plain worker on the same page: the figure the scale section holds to ≤ 1.2×.
// Only that section runs, on a page of its own per sample (about 50 s each); its figures are
// printed, not written: the verdicts are `npm run bench`'s.
//
// With `--against=<revision>`, Airlock as that revision's src/ has it runs too, its pages
// alternating with the working tree's, so a change of a tenth of a millisecond per run is
// told from the machine's drift between runs minutes apart.
//
//   npm run bench:lab:scale-cpu                          3 pages
//   npm run bench:lab:scale-cpu -- --against=HEAD~1 --pages=4
import { chromium } from 'playwright';
import { createServer } from 'vite';
import { chromiumArgs, chromiumPath } from '../../scripts/chromium.mjs';
import { startModelServerProcess } from '../lib/model-server-process.mjs';
import { runSelfMeasuringPage } from '../lib/page-bench.mjs';
import { repoRoot, sharedConfig } from '../lib/vite-setup.mjs';
import { exportSource, option, pagesOption, servePageFrom } from './revision-builds.mjs';

const pages = pagesOption(3);
const against = option('against');

const shared = await sharedConfig();
const cache = new URL('../../node_modules/.airlock-scale-cpu/', import.meta.url).pathname;
/** @param {string} name @param {string} srcDir */
const serveScale = (name, srcDir) =>
  servePageFrom({ shared, outDir: `${cache}${name}`, page: 'scale', srcDir });

const entrants = [{ label: 'airlock', ...(await serveScale('work-tree', `${repoRoot}src/`)) }];
if (against) {
  const { commit, srcDir } = exportSource(against, cache);
  entrants.push({ label: `airlock@${commit}`, ...(await serveScale(`at-${commit}`, srcDir)) });
}
// HTTP/2, as the scale bench serves its 20 streams at once.
const modelServer = await startModelServerProcess({ tls: true });
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
  headless: true,
});

/**
 * @typedef {{ agentCpuMsPerRun: number | null; agentCpuMsPerRunByRound: number[] | null;
 *   cpuRatioToRawLoop: number | null; rawLoop: { cpuMsPerRun: number | null } }} Burst
 */
/** @type {Record<string, { agentMs: number[]; rawMs: number[]; ratios: number[] }>} */
const samples = Object.fromEntries(
  entrants.map(({ label }) => [label, { agentMs: [], rawMs: [], ratios: [] }]),
);
try {
  for (let round = 0; round < pages; round++) {
    for (const { label, origin } of entrants) {
      const figures = /** @type {{ concurrentRuns: Burst }} */ (
        await runSelfMeasuringPage(browser, origin, modelServer.url, 'scale', {
          only: 'concurrentRuns',
        })
      );
      const burst = figures.concurrentRuns;
      if (burst.agentCpuMsPerRun == null || burst.rawLoop.cpuMsPerRun == null)
        throw new Error('The page could not read its workers’ CPU time (no /proc here?).');
      const sample = samples[label];
      sample?.agentMs.push(burst.agentCpuMsPerRun);
      sample?.rawMs.push(burst.rawLoop.cpuMsPerRun);
      sample?.ratios.push(burst.cpuRatioToRawLoop ?? Number.NaN);
      console.log(
        `${label} page ${round + 1}: ${burst.agentCpuMsPerRun} ms against the raw loop's ${burst.rawLoop.cpuMsPerRun} ms per run, ${burst.cpuRatioToRawLoop}×`,
      );
    }
  }
} finally {
  await browser.close();
  await modelServer.close();
  for (const { server } of entrants) await server.close();
}

// The stats module is TypeScript; a throwaway Vite dev server loads it for Node.
const loader = await createServer({ ...shared, server: { middlewareMode: true } });
const { summarize } = await loader.ssrLoadModule('/stats.ts');
await loader.close();
/** @param {number[]} values */
const median = (values) => summarize(values).p50;
const width = Math.max(...entrants.map(({ label }) => label.length));
for (const { label } of entrants) {
  const { agentMs = [], rawMs = [], ratios = [] } = samples[label] ?? {};
  console.log(
    `${label.padEnd(width)}  ${median(agentMs)} ms per run against the raw loop's ${median(rawMs)}: ${median(ratios)}× (pages ${ratios.join(', ')}; bound 1.2×)`,
  );
}
