// `npm run bench:lab:profile`: the agent worker under V8's sampling profiler while the scale
// page's 20-runs-at-once section runs (a warm-up, lone runs, then the bursts), built without
// minifying so functions keep their names. Prints the functions with the most self time and
// the most total time, per run, and writes the whole profile to
// bench/lab/out/agent-worker.cpuprofile (open it in DevTools' Performance panel). With
// `-- --loops`, the hand-written loops' workers (the raw and the storing one) are profiled
// in the same run and reported beside it, so what Airlock adds can be read off one to one.
// Not a figure of record: the profiler slows what it samples; `npm run bench -- scale` measures.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { build, preview } from 'vite';
import { chromiumArgs, chromiumPath } from '../../scripts/chromium.mjs';
import { chromiumWorkerThreads } from '../../test/setup/worker-threads.mjs';
import { startModelServerProcess } from '../lib/model-server-process.mjs';
import { sharedConfig } from '../lib/vite-setup.mjs';
import { workerSessions } from '../lib/worker-heaps.mjs';

/** Microseconds between samples. */
const INTERVAL_US = 100;
const TOP = Number(process.env.AIRLOCK_PROFILE_TOP ?? 40);
const withLoops = process.argv.includes('--loops');

const shared = await sharedConfig();
const outDir = fileURLToPath(new URL('../../node_modules/.airlock-profile', import.meta.url));
await build({
  ...shared,
  build: {
    outDir,
    emptyOutDir: true,
    minify: false,
    rollupOptions: { input: { scale: 'bench/scale/index.html' } },
  },
});
const server = await preview({
  ...shared,
  build: { outDir },
  preview: { host: '127.0.0.1', port: 0, cors: { origin: '*' } },
});
const origin = server.resolvedUrls?.local[0]?.replace(/\/$/, '') ?? '';
// HTTP/2, as the scale bench serves the 20 streams.
const modelServer = await startModelServerProcess({ tls: true });
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: chromiumArgs,
  headless: true,
});
try {
  const page = await browser.newPage({ ignoreHTTPSErrors: true });
  await page.exposeFunction('benchWorkerThreads', () => chromiumWorkerThreads(browser));
  /** @type {Promise<unknown> | undefined} */
  let stopped;
  /** @type {(() => Promise<unknown>) | undefined} */
  let stop;
  // The page calls this before it disposes the agent, whose worker takes its profile with it.
  await page.exposeFunction('benchBeforeDispose', async () => {
    stopped = stop?.();
    await stopped;
  });
  const search = new URLSearchParams({ model: modelServer.url, only: 'concurrentRuns' });
  await page.goto(`${origin}/scale/index.html?${search}`);
  // The page makes the agent's worker, then the raw loop's, then the storing loop's.
  const workers = await workerSessions(
    browser,
    (url) => url.includes('/agent.worker') || (withLoops && url.includes('/raw-loop.worker')),
    withLoops ? 3 : 1,
  );
  for (const worker of workers) {
    await worker.call('Profiler.enable');
    await worker.call('Profiler.setSamplingInterval', { interval: INTERVAL_US });
    await worker.call('Profiler.start');
  }
  stop = () => Promise.all(workers.map((worker) => worker.call('Profiler.stop')));
  await page.waitForFunction(
    () => 'benchResults' in globalThis || 'benchError' in globalThis,
    null,
    {
      timeout: 600_000,
    },
  );
  const figures = await page.evaluate(() => {
    const results = /** @type {{ benchResults?: any; benchError?: string }} */ (globalThis);
    if (results.benchError) throw new Error(results.benchError);
    return results.benchResults.concurrentRuns;
  });
  const answers = /** @type {{ result?: { profile: Profile } }[]} */ (await stopped);
  await Promise.all(workers.map((worker) => worker.detach()));
  // The warm-up, the lone runs and every burst's runs: the same for every contestant.
  const runs = 1 + figures.loneRunMs.n + figures.rounds * figures.runs;
  mkdirSync('bench/lab/out', { recursive: true });
  for (const [index, worker] of workers.entries()) {
    const profile = answers[index]?.result?.profile;
    if (!profile) throw new Error(`The worker at ${worker.url} gave no profile.`);
    const name = contestantOf(worker.url, profile);
    const cpuMsPerRun = {
      agent: figures.agentCpuMsPerRun,
      'raw-loop': figures.rawLoop?.cpuMsPerRun,
      'storing-loop': figures.storingLoop?.cpuMsPerRun,
    }[name];
    writeFileSync(`bench/lab/out/${name}-worker.cpuprofile`, JSON.stringify(profile));
    console.log(`\n== ${name} worker ==\n${report(profile, runs, cpuMsPerRun ?? null)}`);
    console.log(`\nWrote bench/lab/out/${name}-worker.cpuprofile`);
  }
} finally {
  await browser.close();
  await modelServer.close();
  await server.close();
}

/**
 * Which contestant a profiled worker ran: the two hand-written loops share a script, and
 * only the storing one ever calls `storeMessage` (and `openDatabase`).
 * @param {string} url
 * @param {Profile} profile
 */
function contestantOf(url, profile) {
  if (url.includes('/agent.worker')) return 'agent';
  return profile.nodes.some((node) =>
    ['storeMessage', 'openDatabase'].includes(node.callFrame.functionName),
  )
    ? 'storing-loop'
    : 'raw-loop';
}

/**
 * @typedef {{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }} ProfileNode
 * @typedef {{ nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }} Profile
 */

/**
 * Self and total time per function, in ms per run. A sample counts for at most twice the
 * interval: a longer gap is the thread waiting for a core, not running what was on its stack.
 * @param {Profile} profile
 * @param {number} runs
 * @param {number | null} cpuMsPerRun the page's own figure for the bursts, from /proc
 */
function report(profile, runs, cpuMsPerRun) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  /** @type {Map<number, number>} */
  const parents = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parents.set(child, node.id);
  const nameOf = (/** @type {ProfileNode} */ node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url
      .split('/')
      .pop()
      ?.replace(/-[\w-]{8}\.js$/, '.js');
    return file ? `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}` : functionName;
  };
  const self = new Map();
  const total = new Map();
  let sampled = 0;
  profile.samples.forEach((id, index) => {
    const node = nodes.get(id);
    if (!node || ['(idle)', '(program)', '(root)'].includes(node.callFrame.functionName)) return;
    const ms = Math.min(profile.timeDeltas[index] ?? 0, 2 * INTERVAL_US) / 1000;
    sampled += ms;
    self.set(nameOf(node), (self.get(nameOf(node)) ?? 0) + ms);
    // A recursive function's time counts once on its stack.
    const onStack = new Set();
    for (let at = /** @type {number | undefined} */ (id); at !== undefined; at = parents.get(at)) {
      const name = nameOf(/** @type {ProfileNode} */ (nodes.get(at)));
      if (name === '(root)' || onStack.has(name)) continue;
      onStack.add(name);
      total.set(name, (total.get(name) ?? 0) + ms);
    }
  });
  const top = (/** @type {Map<string, number>} */ times) =>
    [...times]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([name, ms]) => `${(ms / runs).toFixed(3).padStart(8)}  ${name}`)
      .join('\n');
  return [
    `${runs} runs; sampled JavaScript ${(sampled / runs).toFixed(2)} ms per run (the bursts' thread CPU from /proc, profiler on: ${cpuMsPerRun ?? 'not read'} ms per run)`,
    `\nself time, ms per run:\n${top(self)}`,
    `\ntotal time, ms per run:\n${top(total)}`,
  ].join('\n');
}
