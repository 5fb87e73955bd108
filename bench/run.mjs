// `npm run bench`: builds the bench pages for production, serves them with Vite's preview
// server, drives Debian's Chromium headless through them, writes the figures to
// bench/results/ and BENCHMARKS.md. Not a test: nothing here passes or fails on a number,
// but a contestant that does not finish its scenario makes the command fail.
//
//   npm run bench                   every page (peers, sandbox, code, memory, knowledge, mcp, ondevice, scale), then BENCHMARKS.md
//   npm run bench -- peers memory   only the named pages
//   npm run bench -- --runs=9       measured runs per contestant (default 5)
//   npm run bench -- code --flow-only --flow-pairs=60
//                                   the code page's flow-cost figure alone, with 60 pairs (default 40),
//                                   printed with the load average and not written
//   npm run bench:smoke             (--smoke) a tiny conversation, one run of each
//                                   contestant, one pass of the code page, a few MCP calls,
//                                   two on-device answers, a small scale page, no files
//                                   written; fails if one does not finish
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { build, createServer, preview } from 'vite';
import { ensureBrowsers, selectedBrowsers } from '../scripts/browsers.mjs';
import { writeTestModel } from '../scripts/build-test-model.mjs';
import { chromiumArgs, chromiumPath } from '../scripts/chromium.mjs';
import { measureBundles } from './lib/bundle-sizes.mjs';
import { runPageIn } from './lib/engine-page.mjs';
import { describeMachine, packageVersions } from './lib/machine.mjs';
import { startModelServerProcess } from './lib/model-server-process.mjs';
import { runSelfMeasuringPage } from './lib/page-bench.mjs';
import { DELIVERY_EVENTS, runContestants, runDelivery } from './lib/peers-driver.mjs';
import { deliverySummary, perStepOverhead, summarizeFields } from './lib/peers-results.mjs';
import { benchedRevision, recordRun } from './lib/run-history.mjs';
import { figuresOnTheirBound, judgeTargets } from './lib/targets.mjs';
import { sharedConfig } from './lib/vite-setup.mjs';
import { writeReport } from './report.mjs';
import { recordedVerdicts, scaleTargets } from './scale-section.mjs';

/** Peers rounds when a target figure's rounds fall on both sides of its bound. */
const ROUNDS_WHEN_UNDECIDED = 9;
const PAGES = ['peers', 'sandbox', 'code', 'memory', 'knowledge', 'mcp', 'ondevice', 'scale'];
const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const runs = Number(
  /^--runs=(\d+)$/.exec(args.find((arg) => arg.startsWith('--runs=')) ?? '')?.[1] ?? 5,
);
const chosen = args.filter((arg) => !arg.startsWith('--'));
/** The code page's flow-cost figure alone (`--flow-only`), or with `--flow-pairs=N` pairs (default 40). */
const flowPairs = /^--flow-pairs=(\d+)$/.exec(
  args.find((arg) => arg.startsWith('--flow-pairs=')) ?? '',
)?.[1];
const codeQuery = {
  ...(flowPairs ? { flowPairs } : {}),
  ...(args.includes('--flow-only') ? { flowOnly: '1' } : {}),
};
const pages = smoke
  ? ['peers', 'code', 'mcp', 'ondevice', 'scale']
  : PAGES.filter((name) => chosen.length === 0 || chosen.includes(name));
const started = performance.now();
const loadAtStart = loadavg();
// Read before the pages are built from the working tree: the code the histories name.
const revision = benchedRevision();
const cores = cpus().length;
// Figures from a machine busier than its cores say more about the other work than about
// Airlock: they are written, but the report gives them no verdict, and says why.
if (loadAtStart[0] !== undefined && loadAtStart[0] > cores) {
  console.warn(
    `The load average at the start (${loadAtStart[0].toFixed(1)}) exceeds the ${cores} cores: the report will give no verdicts for this run.`,
  );
}
const log = (/** @type {string} */ line) => console.log(line);
log(
  `Load average at the start: ${loadAtStart.map((load) => load.toFixed(2)).join(', ')} (1, 5, 15 min) on ${cores} cores.`,
);

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
      // The peers page's probes (frames, long tasks) in a file of their own, so the driver
      // can tell their samples from the contestants' in a page profile.
      output: {
        manualChunks: (id) => (id.endsWith('/bench/peers/probes.ts') ? 'probes' : undefined),
      },
    },
  },
});
// The on-device page's model: the tests' tiny GGUF, written beside the built page.
if (pages.includes('ondevice')) writeTestModel(`${outDir}/ondevice/tiny-llama.gguf`);
const server = await preview({
  ...shared,
  build: { outDir },
  // The iframe tier's opaque-origin worker loads its bundle with Origin: null.
  preview: { host: '127.0.0.1', port: 0, cors: { origin: '*' } },
});
const origin = server.resolvedUrls?.local[0]?.replace(/\/$/, '') ?? '';
// The scenario, the stats and the MCP and proxy servers are TypeScript; a throwaway Vite dev
// server loads them for Node. The fake model server runs in a process of its own.
const loader = await createServer({ ...shared, server: { middlewareMode: true } });
const modelServer = await startModelServerProcess();
// The scale page runs 20 streams at once. Over HTTP/1.1 Chromium would queue all but six
// of them (its limit per host); hosted models serve HTTP/2, so this server does too.
const http2ModelServer = pages.includes('scale')
  ? await startModelServerProcess({ tls: true })
  : undefined;
// The MCP page's server (the official SDK's) behind the proxy's `/mcp/<name>` route.
const mcp = pages.includes('mcp') ? await startMcpBehindProxy() : undefined;
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
    const query = {
      ...(name === 'mcp' ? { mcp: mcp?.url ?? '' } : {}),
      ...(name === 'code' ? codeQuery : {}),
      ...(smoke ? { smoke: '1' } : {}),
    };
    const modelUrl = name === 'scale' ? (http2ModelServer?.url ?? '') : modelServer.url;
    const figures = await runSelfMeasuringPage(browser, origin, modelUrl, name, query);
    if (smoke || codeQuery.flowOnly) {
      // A part of a page's figures is shown, not written: it would replace the page's results.
      log(
        `The ${name} page finished (load average ${loadavg()
          .map((load) => load.toFixed(2))
          .join(', ')}): ${JSON.stringify(figures, null, 2)}`,
      );
      continue;
    }
    const results = {
      date: new Date().toISOString(),
      chromium: browser.version(),
      node: process.version,
      machine: describeMachine(browser.version(), loadAtStart),
      [name]: figures,
    };
    writeFileSync(`bench/results/${name}.json`, `${JSON.stringify(results, null, 2)}\n`);
    log(`Wrote bench/results/${name}.json`);
    if (name === 'scale')
      recordHistory(name, (written) => recordedVerdicts(scaleTargets(written, undefined)));
    if (name === 'knowledge')
      recordHistory(name, (written) => recordedVerdicts(scaleTargets(undefined, written)));
    if (name === 'sandbox') await benchSandboxEngines(results.date, results.sandbox);
  }
} finally {
  await browser.close();
  await mcp?.close();
  await modelServer.close();
  await http2ModelServer?.close();
  await loader.close();
  await server.close();
}
if (!smoke && !codeQuery.flowOnly) {
  writeReport();
  log('Wrote BENCHMARKS.md');
}
log(`${smoke ? 'Smoke' : 'Bench'} done in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
process.exit(failed ? 1 : 0);

/**
 * The MCP test server (official SDK) and an Airlock proxy serving it as `/mcp/notes` with
 * the credentials it needs, both on 127.0.0.1: the route the MCP page calls through.
 */
async function startMcpBehindProxy() {
  const { startMcpTestServer } = await loader.ssrLoadModule('/../test/setup/mcp-test-server.ts');
  const { createProxyHandler, toNodeListener } = await loader.ssrLoadModule('/../src/proxy.ts');
  const mcpServer = await startMcpTestServer();
  const { createServer: createHttpServer } = await import('node:http');
  const proxy = createHttpServer(
    toNodeListener(
      createProxyHandler({
        upstream: 'http://127.0.0.1:9/v1',
        apiKey: 'sk-unused-by-the-mcp-bench',
        allowAnonymous: true,
        logger: () => {},
        allowedOrigins: '*',
        // The bench's calls all count as the anonymous user's; the figures are not about limits.
        limits: { requestsPerMinute: 1_000_000 },
        mcp: {
          notes: {
            url: `${mcpServer.url}/mcp?t=secret`,
            headers: { Authorization: 'Bearer upstream-secret' },
            // The one tool the bench calls: the proxy lists and forwards no other.
            allowedTools: ['echo'],
          },
        },
      }),
    ),
  );
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (proxy.address());
  return {
    url: `http://127.0.0.1:${address.port}/mcp/notes`,
    async close() {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(() => resolve(undefined)));
      await mcpServer.close();
    },
  };
}

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

/**
 * Structured output and one image input, Airlock beside the Vercel AI SDK: each pair on a
 * fresh page, `runs` measured runs after a warm-up, every run checked on the page.
 * @param {string} url
 * @param {number} runs
 * @param {(samples: number[]) => unknown} summarize
 */
async function benchModalities(url, runs, summarize) {
  /** @type {Record<string, Record<string, unknown>>} */
  const figures = {};
  /** @type {{ contestant: string; kind: string; message: string }[]} */
  const failures = [];
  for (const kind of ['structured-output', 'image']) {
    figures[kind] = {};
    for (const contestant of ['airlock', 'vercel-ai']) {
      log(`Running ${contestant}: ${kind}, ${runs} run(s)…`);
      const page = await browser.newPage();
      try {
        await page.goto(url);
        await page.waitForFunction(() => 'benchReady' in globalThis, null, { timeout: 30_000 });
        /** @type {{ wallMs: number; firstOutputMs: number; longTaskMs: number }[]} */
        const samples = await page.evaluate(
          ([name, what, count]) =>
            /** @type {any} */ (globalThis).bench.modalities(name, what, count),
          /** @type {const} */ ([contestant, kind, runs]),
        );
        const walls = samples.map((sample) => Math.round(sample.wallMs)).join(', ');
        log(`  ${contestant} ${kind}: ${walls} ms wall`);
        figures[kind][contestant] = {
          wallMs: summarize(samples.map((sample) => sample.wallMs)),
          firstOutputMs: summarize(samples.map((sample) => sample.firstOutputMs)),
          longTaskMs: summarize(samples.map((sample) => sample.longTaskMs)),
          samples,
        };
      } catch (error) {
        failures.push({
          contestant,
          kind,
          message: error instanceof Error ? error.message : String(error),
        });
      } finally {
        await page.close();
      }
    }
  }
  return { runs, figures, failures };
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
  const modalities = await benchModalities(url, smoke ? 1 : runs, summarize);
  if (smoke) {
    for (const failure of conversation.failures) {
      console.error(`${failure.contestant} did not finish the smoke scenario: ${failure.message}`);
    }
    const finished = names.length - conversation.failures.length;
    log(`${finished} of ${names.length} contestants finished the smoke scenario.`);
    for (const failure of modalities.failures)
      console.error(`${failure.contestant} failed its ${failure.kind} run: ${failure.message}`);
    return conversation.failures.length === 0 && modalities.failures.length === 0;
  }
  writeFileSync(
    'bench/results/modalities.json',
    `${JSON.stringify({ date: new Date().toISOString(), machine: describeMachine(browser.version(), loadAtStart), versions: packageVersions(), ...modalities }, null, 2)}\n`,
  );
  log('Wrote bench/results/modalities.json');
  log(`Measuring event delivery (${DELIVERY_EVENTS} events)…`);
  const delivery = await runDelivery({ browser, url, runs, log });
  // A figure whose rounds fall on both sides of its bound gets rounds added, up to
  // ROUNDS_WHEN_UNDECIDED, conversation and delivery alike, so that each stays paired.
  const samplesOf = (/** @type {string} */ name) => conversation.samples[name] ?? [];
  const contestantsFigures = () =>
    Object.fromEntries(
      roster.map((contestant) => [
        contestant.name,
        {
          ...contestant,
          summary: summarizeFields(samplesOf(contestant.name), summarize),
          samples: samplesOf(contestant.name),
        },
      ]),
    );
  const undecided = figuresOnTheirBound({ contestants: contestantsFigures() }, delivery.samples);
  const addedRounds = undecided.length > 0 ? Math.max(0, ROUNDS_WHEN_UNDECIDED - runs) : 0;
  if (addedRounds > 0) {
    log(
      `The rounds of ${undecided.join(', ')} fall on both sides of the bound: ${addedRounds} more round(s)…`,
    );
    const more = await runContestants({
      browser,
      url,
      names,
      scenario: scenario.name,
      runs: addedRounds,
      firstRound: runs,
      quick: false,
      log,
    });
    for (const name of names) conversation.samples[name]?.push(...(more.samples[name] ?? []));
    conversation.failures.push(...more.failures);
    const moreDelivery = await runDelivery({
      browser,
      url,
      runs: addedRounds,
      firstRound: runs,
      log,
    });
    delivery.samples.push(...moreDelivery.samples);
    delivery.failures.push(...moreDelivery.failures);
  }
  log('Measuring bundle sizes…');
  const bundles = await measureBundles(shared.resolve.alias);

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
      runs: runs + addedRounds,
      addedRounds: { rounds: addedRounds, figures: addedRounds > 0 ? undecided : [] },
      runsPerPage:
        'a warm-up, the measured run, a profiled run, two runs timed to their first text',
      modelServer: 'a process of its own',
    },
    contestants: contestantsFigures(),
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
  recordHistory('peers', (written) => judgeTargets(written, undefined));
  return results.failures.length === 0;
}

/**
 * Adds the run just written to `bench/results/<name>.json` to its history, judged as the
 * report judges it: from that file.
 * @param {string} name
 * @param {(written: any) => import('./lib/run-history.mjs').RecordedVerdict[]} judge
 */
function recordHistory(name, judge) {
  const written = JSON.parse(readFileSync(`bench/results/${name}.json`, 'utf8'));
  recordRun(`bench/results/${name}-history.json`, { ...written, revision }, judge(written));
  log(`Added the run to bench/results/${name}-history.json`);
}
