// Writes BENCHMARKS.md from bench/results/*.json. `npm run bench` calls it at the end;
// `node bench/report.mjs` regenerates the file from the stored figures alone.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { noVerdictReason } from './lib/load-check.mjs';
import { sectionInReport } from './lib/report-section.mjs';
import { CONSECUTIVE, readHistory, runAfterRunTable } from './lib/run-history.mjs';
import { bestPagePeer, judgeTargets } from './lib/targets.mjs';
import { modalitiesSection } from './modalities-section.mjs';
import { PROXY_HEADING, proxySection } from './proxy-section.mjs';
import { SCALE_HEADING, scaleSection } from './scale-section.mjs';
import { SOAK_HEADING, soakSection } from './soak-section.mjs';

/** @typedef {import('./lib/targets.mjs').Summary} Summary */
/** @typedef {import('./lib/targets.mjs').BundleSize} BundleSize */
/**
 * @typedef {import('./lib/targets.mjs').PeersResults & {
 *   date: string;
 *   machine: { cores: number; cpu: string; memoryGiB: number; os: string; node: string; chromium: string; loadAverage?: { start: number[]; end: number[] } };
 *   versions: Record<string, string | null>;
 *   scenario: { description: string; runs: number; addedRounds?: { rounds: number; figures: string[] }; runsPerPage: string; modelServer?: string; toolCalls: number };
 *   contestants: Record<string, { name: string; label: string; loop: 'page' | 'worker'; setup: string; packages: string[] }>;
 *   delivery: { events: number };
 *   bundles: { contestants: Record<string, { page: BundleSize; pageWithoutZod: BundleSize; worker?: BundleSize }> };
 *   failures: { contestant: string; round: number; message: string }[];
 * }} PeersFile
 */

const resultsDir = new URL('./results/', import.meta.url);
const reportPath = fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url));

/**
 * A results file, parsed, or undefined when there is none yet.
 * @param {string} name
 * @returns {unknown}
 */
function readResults(name) {
  const url = new URL(`${name}.json`, resultsDir);
  return existsSync(url) ? JSON.parse(readFileSync(url, 'utf8')) : undefined;
}

/** A number as the tables show it: one decimal under 10, else whole, with separators. */
function formatNumber(/** @type {number} */ value) {
  if (!Number.isFinite(value)) return '–';
  return Math.abs(value) < 10 && !Number.isInteger(value)
    ? value.toFixed(1)
    : Math.round(value).toLocaleString('en-US');
}

/** `median (min–max)`. */
function cell(/** @type {Summary | undefined} */ summary) {
  if (!summary || summary.n === 0) return '–';
  if (summary.min === summary.max) return formatNumber(summary.p50);
  return `${formatNumber(summary.p50)} (${formatNumber(summary.min)}–${formatNumber(summary.max)})`;
}

const kb = (/** @type {number} */ bytes) => `${(bytes / 1024).toFixed(1)} KB`;

/**
 * @param {string[]} header
 * @param {string[][]} rows
 */
function table(header, rows) {
  const line = (/** @type {string[]} */ cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The metrics of the main table, in order, with how each is read. */
const METRICS = [
  { key: 'wallMs', label: 'wall time to the final answer (ms)' },
  {
    key: 'firstTextRunsMs',
    label: '**time to the first text delta, runs 2, 4 and 5 of each page (ms)**',
  },
  { key: 'firstTextMs', label: "time to the first text delta, each page's second run (ms)" },
  { key: 'pageJsMs', label: '**page JS time, sampled (ms)**' },
  { key: 'pageGcMs', label: 'page GC time, sampled (ms)' },
  { key: 'pageProbeMs', label: "the bench's probes on the page, sampled (ms)" },
  { key: 'cdpTaskMs', label: 'page busy time, CDP `TaskDuration` (ms)' },
  { key: 'cdpScriptMs', label: 'CDP `ScriptDuration` (ms), undercounts promise work' },
  { key: 'longTasks', label: 'long tasks > 50 ms (count)' },
  { key: 'longTaskMs', label: 'long tasks, total (ms)' },
  { key: 'maxFrameGapMs', label: 'longest gap between frames (ms)' },
  { key: 'frameGapsOver50', label: 'frame gaps > 50 ms (count)' },
  { key: 'textDeltasPerSecond', label: 'text deltas per second at the page' },
];

/** Ratios to the best page-thread peer, for the metrics where lower is better. */
const RATIO_METRICS = [
  { key: 'pageJsMs', label: 'page JS time' },
  { key: 'cdpTaskMs', label: 'page busy time' },
  { key: 'wallMs', label: 'wall time' },
];

/**
 * Why a run has more rounds than asked for: the figures whose rounds fell on both sides
 * of their bound.
 * @param {{ rounds: number; figures: string[] } | undefined} added
 */
function addedRoundsNote(added) {
  if (!added || added.rounds === 0) return '';
  return ` (${added.rounds} of them added because the rounds of ${added.figures.join(', ')} fell on both sides of the bound)`;
}

/** @param {PeersFile} peers */
function peersSections(peers) {
  const contestants = Object.values(peers.contestants);
  const machine = peers.machine;
  const load = machine.loadAverage
    ? `${machine.loadAverage.start.map((value) => value.toFixed(1)).join(' / ')} at the start, ${machine.loadAverage.end.map((value) => value.toFixed(1)).join(' / ')} at the end (1 / 5 / 15 min)`
    : 'not recorded';
  const sections = [];
  sections.push(`## Machine

| | |
|---|---|
| cores | ${machine.cores} (${machine.cpu}) |
| memory | ${machine.memoryGiB} GiB |
| OS | ${machine.os} |
| Node | ${machine.node} |
| Chromium | ${machine.chromium} (headless, \`${'--no-sandbox --disable-gpu'}\`) |
| load average | ${load} |
| date | ${peers.date} |

## Versions

${table(
  ['package', 'version'],
  Object.entries(peers.versions).map(([name, version]) => [name, version ?? 'not installed']),
)}`);

  sections.push(`## The conversation

Every contestant goes through the same scripted conversation with the fake model server
of \`airlock-agents/testing\` (\`startModelServer()\`) on 127.0.0.1, in ${peers.scenario.modelServer ?? "the driver's Node process"}, with no added latency: ${peers.scenario.description}.
The server streams one word per SSE chunk. The tool, \`lookup\`, returns a small JSON
object and runs on the page for every contestant. Each run is checked: the exact final
answer, ${peers.scenario.toolCalls} tool calls run, one model request per step, every text delta at the page.

${table(
  ['contestant', 'loop runs on', 'setup'],
  contestants.map((contestant) => [contestant.label, contestant.loop, contestant.setup]),
)}

**Runs.** ${peers.scenario.runs} rounds${addedRoundsNote(peers.scenario.addedRounds)}; in each, every contestant gets a fresh page (its own
browser context, so a fresh IndexedDB: Airlock's database is new for each round), is set
up once there (client, agent and workers, not timed), and makes five runs, each a new
conversation: ${peers.scenario.runsPerPage}. Only the measured run gives timings, but for
the time to first text, taken from it and from the runs after it too: a page's second run
is where V8 recompiles the stream path it optimised during the warm-up (\`--js-flags=--trace-opt
--trace-deopt\` shows Airlock's stream generators deoptimised and compiled again as that run
starts), so one sample a page would stand for that moment alone. The target reads the median
over runs 2, 4 and 5 (the third is profiled); the second runs alone are shown beside it. The contestants' order rotates
from round to round. Cells are \`median (min–max)\` over the rounds (over every run timed,
for runs 2, 4 and 5).

**How each figure is taken.**

- *Wall time* and *time to first text*: \`performance.now()\` on the page, from the call that
  starts the run to its final answer, and to the first text delta the page receives.
- *Page JS time*: a separate run under V8's sampling profiler on the page (CDP
  \`Profiler\`, one sample every 100 µs); samples in JavaScript are added up, GC apart,
  each for the time since the one before it but at most 200 µs (a longer gap is the
  thread waiting for a core, which on a 2-core machine came to several ms in some runs and
  was charged to whatever function was on the stack). This is the page-thread script time
  the targets use. The bench's own probes (the frame
  loop and the long-task observer below, built into a file of their own) run on every
  contestant's page; their samples, with the browser functions they call, are shown apart
  and not counted (about 1.4 ms a run in a profile of Airlock's, where they were the largest
  single item). CDP \`Performance.getMetrics\`
  \`ScriptDuration\` is shown too, read around the measured run, but it misses promise
  reactions: a \`fetch\` stream read on the page runs almost entirely in them, so it reads
  near zero for the page-thread peers.
- *Page busy time*: CDP \`Performance.getMetrics\` \`TaskDuration\` delta around the measured
  run: every task on the page's main thread (scripts, message and network dispatch, frames).
- *Long tasks*: a \`PerformanceObserver\` for \`longtask\` entries that start during the run.
- *Frames*: a \`requestAnimationFrame\` loop during the run; the longest gap between two
  frames, and how many gaps exceed 50 ms.
- *Text deltas per second*: deltas received by the page, between the first and the last.`);

  // Main table.
  sections.push(`## Results

${table(
  ['', ...contestants.map((contestant) => contestant.label)],
  [
    ['loop runs on', ...contestants.map((contestant) => contestant.loop)],
    ...METRICS.map((metric) => [
      metric.label,
      ...contestants.map((contestant) => cell(contestant.summary[metric.key])),
    ]),
  ],
)}`);

  const ratioRows = RATIO_METRICS.flatMap((metric) => {
    const best = bestPagePeer(peers, metric.key);
    if (!best || typeof best.p50 !== 'number') return [];
    const bestValue = best.p50;
    return [
      [
        `${metric.label} (best page-thread peer: ${best.contestant.label}, ${formatNumber(bestValue)} ms)`,
        ...contestants.map((contestant) => {
          const value = contestant.summary[metric.key]?.p50;
          return typeof value === 'number' && bestValue > 0
            ? `${(value / bestValue).toFixed(2)}×`
            : '–';
        }),
      ],
    ];
  });
  sections.push(`### Against the best page-thread peer

Medians divided by the median of the page-thread contestant (Vercel AI SDK, OpenAI Agents
SDK, hand-written loop on the page) that does best on that figure.

${table(['', ...contestants.map((contestant) => contestant.label)], ratioRows)}`);

  const perStep = peers.perStep;
  sections.push(`### Per step: Airlock against the raw loop in a worker

Wall time divided by the ${peers.scenario.steps} steps; the overhead is the ratio of the medians, and
the same ratio within each round (Airlock's and the raw worker loop's runs of one round).

${table(
  ['', 'median (min–max)'],
  [
    ['Airlock, ms per step', cell(perStep.airlockMsPerStep)],
    ['raw loop in a worker, ms per step', cell(perStep.rawWorkerMsPerStep)],
    [
      'Airlock extra, ms per step (difference of the medians)',
      formatNumber(perStep.extraMsPerStep),
    ],
    ['Airlock overhead, % (ratio of the medians)', formatNumber(perStep.overheadPercent)],
    ['Airlock overhead within a round, %', cell(perStep.overheadPercentPerRound)],
  ],
)}`);

  const delivery = peers.delivery.summary;
  sections.push(`### Event delivery

In one page per round: a worker posts ${peers.delivery.events.toLocaleString('en-US')} small messages
(\`{ type: 'text-delta', step, delta }\`) on a \`MessagePort\` as fast as it can (the raw
port's rate), then Airlock and the raw worker loop each stream one answer of
${peers.delivery.events.toLocaleString('en-US')} words. For these two runs the worker's \`fetch\` reads the
response whole and hands it to \`openai\` one SSE event per chunk
(\`bench/peers/workers/buffered-fetch.ts\`), so the rate is the worker's and the port's,
not the local server's, nor that of \`openai\`'s SSE splitting (\`iterSSEChunks\`), which
copies the rest of its buffer after every event and so grows with the square of the read
size when a fast stream's reads coalesce: while this bench was built, 10 000 words streamed
from the server into the page loop took about 3.5 s of JavaScript, nearly all of it there.
Rates are events per second
received by the page, between the first and the last.

${table(
  ['', 'median (min–max)'],
  [
    ['raw MessagePort, events/s', cell(delivery.portEventsPerSecond)],
    ['Airlock text deltas, events/s', cell(delivery.airlockEventsPerSecond)],
    ['raw loop in a worker, text deltas/s', cell(delivery.rawWorkerEventsPerSecond)],
    ['Airlock, % of the raw port', cell(delivery.airlockPercentOfPort)],
    ['raw worker loop, % of the raw port', cell(delivery.rawWorkerPercentOfPort)],
    ['Airlock, % of the raw worker loop', cell(delivery.airlockPercentOfRawWorker)],
  ],
)}`);

  // Bundles.
  const bundles = peers.bundles;
  const library = bundles.airlockLibrary;
  sections.push(`## Bundle sizes

Each contestant's page module (\`bench/peers/contestants/<name>.ts\`, exactly the code that
runs in the bench, the tool's zod schema included) and worker entry, built alone with
Vite the way an app's bundler would (minified, tree-shaken, browser conditions,
\`process.env.NODE_ENV\` = production); gzip per chunk, lazy chunks included. "Without
zod" marks zod external, to show each library without the schema library (Airlock's page
entry itself contains no zod; its page tool's schema brings it). The largest parts are
packages or repository files with their share of the bundle, measured before
minification and applied to the gzip size: an estimate.

${table(
  [
    'contestant',
    'on the page, gzip (min)',
    'page without zod, gzip',
    'in its worker, gzip (min)',
    'largest parts on the page (share of the gzip)',
  ],
  contestants.map((contestant) => {
    const sizes = bundles.contestants[contestant.name];
    if (!sizes) return [contestant.label, '–', '–', '–', ''];
    const chunks = sizes.page.chunks > 1 ? `, ${sizes.page.chunks} chunks` : '';
    return [
      contestant.label,
      `${kb(sizes.page.gzipBytes)} (${kb(sizes.page.bytes)}${chunks})`,
      kb(sizes.pageWithoutZod.gzipBytes),
      sizes.worker ? `${kb(sizes.worker.gzipBytes)} (${kb(sizes.worker.bytes)})` : '–',
      sizes.page.largest
        .slice(0, 4)
        .map((part) => `${part.module} ~${kb(part.gzipBytes)}`)
        .join(', '),
    ];
  }),
)}

Airlock's library entries alone, what loads when each starts (\`npm run size\`; code loaded on first use, by dynamic \`import()\`, is not counted):

${table(
  ['entry', 'gzip', 'minified', 'largest parts (share of the gzip)'],
  [
    [
      'page (`airlock-agents`)',
      kb(library.page.gzipBytes),
      kb(library.page.bytes),
      library.page.largest
        .slice(0, 5)
        .map((part) => `${part.module} ~${kb(part.gzipBytes)}`)
        .join(', '),
    ],
    [
      'worker (`airlock-agents/worker`)',
      kb(library.worker.gzipBytes),
      kb(library.worker.bytes),
      library.worker.largest
        .slice(0, 5)
        .map((part) => `${part.module} ~${kb(part.gzipBytes)}`)
        .join(', '),
    ],
  ],
)}`);
  return sections;
}

/**
 * @param {ReturnType<typeof judgeTargets>} verdicts
 * @param {string | undefined} refused why the run gets no verdicts, if it gets none
 */
function targetsSection(verdicts, refused) {
  return `## Targets
${
  refused
    ? `
**No verdicts for this run: ${refused}.** The figures are kept; run the bench again on a quiet machine.
`
    : ''
}
${table(
  ['target', 'measured (medians)', 'verdict', 'what would close a miss'],
  verdicts.map((verdict) => [
    verdict.target,
    verdict.measured,
    refused
      ? 'no verdict'
      : verdict.met
        ? `**met**${verdict.by ? ` (${verdict.by})` : ''}`
        : `**missed** by ${verdict.by}`,
    verdict.close || '–',
  ]),
)}`;
}

/**
 * The peers bench's targets in each of its last recorded runs.
 * @param {import('./lib/run-history.mjs').HistoryEntry[]} history
 */
export function consecutiveRunsSection(history) {
  const heading = '## Run after run';
  if (history.length === 0)
    return `${heading}\n\nNo runs recorded yet: \`npm run bench -- peers\`.`;
  return `${heading}

The peers bench's targets in each of the last ${Math.min(history.length, CONSECUTIVE)} recorded runs (\`bench/results/peers-history.json\`,
newest last; a run whose load average at the start exceeded the cores gets no verdict). A
target holds when it is met in each of ${CONSECUTIVE} runs in a row.

${runAfterRunTable([{ page: 'peers', history }])}`;
}

/** Labels for the sandbox and memory figures. */
const SELF_MEASURED_LABELS = /** @type {Record<string, string>} */ ({
  coldWorkerStartMs: 'cold tool worker (create → tools described), ms',
  coldIframeStartMs: 'cold iframe-tier worker (iframe + worker → tools described), ms',
  warmCallMs: 'warm sandboxed call (agent worker → tool worker → back, no-op tool), ms',
  killAfterDeadlineMs: 'call resolved and worker killed after the deadline (`while(true)`), ms',
  'callMs.page': 'page tool call (agent worker → page → back, no-op tool), ms',
  'callMs.sandbox':
    'sandboxed tool call (agent worker → pooled tool worker → back, no-op tool), ms',
  'onDevice.firstTextMs':
    'on-device (llama.cpp in WebAssembly, CPU, tiny 466 KB test model): first text after `run()`, ms',
  'onDevice.tokensPerSecond': 'on-device: tokens per second while it streams (200 tokens)',
  'onDevice.coldFirstTextMs':
    'on-device: first text of the first run (weights fetched and loaded into llama.cpp), ms',
  'cloud.firstTextMs': 'cloud (openai client → fake model server): first text after `run()`, ms',
  'cloud.tokensPerSecond': 'cloud: tokens per second while it streams (200 words at once)',
  'cloud.coldFirstTextMs': 'cloud: first text of the first run, ms',
  'callMs.mcpViaProxy':
    'MCP tool call through the proxy (agent worker → proxy `/mcp/notes` → MCP server → back, echo), ms',
  coldCodeWorkerStartMs: 'cold code tool worker (create → QuickJS loaded → tool described), ms',
  warmCodeCallMs: 'warm code tool call (`return 6 * 7`, fresh QuickJS runtime and context), ms',
  tenCallsInScriptMs: 'run with 10 tool calls in one script (code mode), wall ms',
  tenCallsAsStepsMs: 'run with the same 10 calls as 10 model steps, wall ms',
  'flowCost.stepMsWithout':
    'information-flow labels: a warm agent without a `flow` policy, median step of an 11-step run, ms',
  'flowCost.stepMsWith': 'information-flow labels: the same with a `flow` policy, ms',
  'flowCost.overheadPct':
    'information-flow labels: per-step overhead, each pair of interleaved runs (with − without) / without, % (goal ≤ 2)',
  'flowCost.wallOverheadPct':
    'information-flow labels: the same from the runs’ wall time (run start and end included), %',
  flowTrackerStepUs:
    'information-flow labels: the label tracker’s own work per step (request label, decision, join), alone on the page, µs',
  appendStepMs: 'append a step (messages, checkpoint, audit; one transaction), ms',
  'contextBuildMs.1k': 'build a context, 1k stored messages, ms',
  'contextBuildMs.10k': 'build a context, 10k stored messages, ms',
  'contextBuildMs.100k': 'build a context, 100k stored messages, ms',
  'searchMs.1k': 'knowledge search (embed locally, scan, read k chunks), 1k chunks, ms',
  'searchMs.10k': 'knowledge search (embed locally, scan, read k chunks), 10k chunks, ms',
  'searchMs.50k': 'knowledge search (embed locally, scan, read k chunks), 50k chunks, ms',
  'indexScanMs.1k': 'VectorIndex search alone (256 dims, top 5), 1k chunks, ms',
  'indexScanMs.10k': 'VectorIndex search alone (256 dims, top 5), 10k chunks, ms',
  'indexScanMs.50k': 'VectorIndex search alone (256 dims, top 5), 50k chunks, ms',
  'searchMs.100k': 'knowledge search (embed locally, scan, read k chunks), 100k chunks, ms',
  'indexScanMs.100k': 'VectorIndex search alone (256 dims, top 5), 100k chunks, ms',
  'concurrentRuns.loneRunMs': 'a lone run, paced stream, wall ms',
  'concurrentRuns.concurrentRunMs': 'each of 20 runs at once, paced streams, wall ms',
  'concurrentRuns.ratioToLone': 'each of 20 runs at once, ratio to a lone run',
  'sandboxBurst.callMs': 'each of 100 sandboxed calls in flight, ms',
  'conversationList.firstPageMs':
    'conversation list, first page of 50, 1,000 conversations / 100,000 messages, ms',
  'conversationList.nextPageMs': 'conversation list, the page after the first, ms',
  'conversationList.wholeListMs': 'conversation list, all 1,000 conversations at once, ms',
});

/**
 * What the information-flow rows measure, their 95 % intervals, the verdict on the goal and
 * the machine's load while they were measured.
 * @param {unknown} flow the code page's `flowCost`
 * @param {{ loadAverage?: { start?: number[]; end?: number[] }; cores?: number } | undefined} machine
 */
function flowCostText(flow, machine) {
  if (typeof flow !== 'object' || flow === null || !('pairs' in flow)) return '';
  const cost =
    /** @type {{ pairs: number; steps: number; overheadPctInterval: { low: number; high: number } | null; wallOverheadPctInterval: { low: number; high: number } | null; verdict: string }} */ (
      flow
    );
  const interval = (/** @type {{ low: number; high: number } | null} */ value) =>
    value ? `${formatNumber(value.low)} to ${formatNumber(value.high)} %` : 'too few pairs';
  const load = (/** @type {number[] | undefined} */ value) => value?.[0]?.toFixed(1) ?? '?';
  const busy =
    (machine?.loadAverage?.start?.[0] ?? 0) > (machine?.cores ?? Number.POSITIVE_INFINITY);
  const verdict = busy
    ? 'no verdict is given: the load at the start exceeded the cores (run it again on a quiet machine)'
    : cost.verdict === 'holds'
      ? 'the goal (≤ 2 %) holds: the interval is under it'
      : cost.verdict === 'missed'
        ? 'the goal (≤ 2 %) is missed: the interval is over it'
        : 'the goal (≤ 2 %) is not settled: the interval holds 2 %';
  return `The information-flow rows come from four warm agents (two with a \`flow\` policy, two without; each created once, its chunks loaded and three runs done) making ${cost.pairs} pairs of interleaved runs of the same ${cost.steps}-step run, the order alternating, each run in a new conversation. A step is a run's median \`step-finish\` duration, timed in the agent worker; the overhead is the median of the pairs' differences, with its 95 % distribution-free interval: ${interval(cost.overheadPctInterval)} per step (${interval(cost.wallOverheadPctInterval)} of wall time), so ${verdict}. Pairs are added, 20 at a time up to 200, while the interval holds the bound. Load average ${load(machine?.loadAverage?.start)} at the start and ${load(machine?.loadAverage?.end)} at the end, on ${machine?.cores ?? '?'} cores: pairing and interleaving keep a steady load out of the difference, but a busy machine widens the interval.`;
}

/**
 * Rows for every summary in a self-measuring page's figures.
 * @param {Record<string, unknown>} figures
 * @param {string} prefix
 * @returns {string[][]}
 */
function summaryRows(figures, prefix = '') {
  return Object.entries(figures).flatMap(([key, value]) => {
    const path = `${prefix}${key}`;
    if (typeof value !== 'object' || value === null) return [];
    if ('p50' in value) {
      const summary = /** @type {Summary} */ (value);
      return [
        [
          SELF_MEASURED_LABELS[path] ?? path,
          formatNumber(summary.p50),
          formatNumber(summary.p95),
          `${formatNumber(summary.min)}–${formatNumber(summary.max)}`,
          String(summary.n),
        ],
      ];
    }
    return summaryRows(/** @type {Record<string, unknown>} */ (value), `${path}.`);
  });
}

/**
 * @param {string} name
 * @param {string} title
 */
function selfMeasuredSection(name, title) {
  const stored =
    /** @type {({ date: string; chromium: string; node: string } & Record<string, Record<string, unknown> | undefined>) | undefined} */ (
      readResults(name)
    );
  const figures = stored?.[name];
  if (!figures) {
    return (
      sectionInReport(`## ${title}`) ??
      `## ${title}\n\nNo figures yet: \`npm run bench -- ${name}\`.`
    );
  }
  const imports = /** @type {Record<string, number> | undefined} */ (figures.importChunksPerSecond);
  const extra =
    name === 'ondevice'
      ? `\n\nThe on-device path runs the tests' self-built model (\`scripts/build-test-model.mjs\`: llama architecture, dim 64, 2 layers, F32, byte vocabulary, random weights) through \`wasmModel\` on the CPU (one thread, no WebGPU), each answer held by a grammar to 200 tokens. It is tiny: the figures show what the WebAssembly engine and its worker cost around a model, not what a real model (hundreds of MB, billions of weights) would do here, which is slower by orders of magnitude. The cloud path's fake server answers at once, so its figures are Airlock's own cost. The machine is shared, so the figures move from run to run (load average ${JSON.stringify(/** @type {{ machine?: { loadAverage?: { start?: number[] }; cores?: number } }} */ (stored).machine?.loadAverage?.start?.[0])} at the start, on ${/** @type {{ machine?: { cores?: number } }} */ (stored).machine?.cores} cores).`
      : typeof figures.modelCallsScript === 'number'
        ? `\n\nModel calls: ${figures.modelCallsScript} with the script, ${figures.modelCallsSteps} as steps. The fake model answers at once, so the wall times show Airlock's own cost per step; with a real model each saved call also saves its latency. ${flowCostText(figures.flowCost, /** @type {{ machine?: { loadAverage?: { start?: number[]; end?: number[] }; cores?: number } }} */ (stored).machine)}`
        : typeof figures.storageBytesPerMessage === 'number'
          ? `\n\nStorage: about ${figures.storageBytesPerMessage} bytes per stored chat message (\`navigator.storage.estimate()\` before and after 5 000 messages).`
          : typeof figures.storageBytesPerChunk === 'number' && imports
            ? `\n\nImport (chunk, embed locally, store; no model latency): ${Object.entries(imports)
                .map(([size, rate]) => `${rate} chunks/s up to ${size}`)
                .join(
                  ', ',
                )}. Storage: about ${figures.storageBytesPerChunk} bytes per chunk of ~500 characters with a ${figures.dimension}-dimension vector. A new agent worker's first query at 50k chunks (median of 3): answered after ${figures.firstAnswerMs50k} ms, from the int8 copies of the vectors (${figures.codesReadMs50k} ms to read them alone); the index exact, from the floats, after ${figures.exactIndexMs50k} ms (${figures.vectorReadMs50k} ms to read the packed float blocks alone).${typeof figures.indexScan === 'string' ? ` The index searched with the \`${figures.indexScan}\` scan.` : ''}`
            : '';
  return `## ${title}

Measured ${stored.date} (Chromium ${stored.chromium}, Node ${stored.node}).

${table(['measure', 'p50', 'p95', 'min–max', 'n'], summaryRows(figures))}${extra}`;
}

/** The sandbox figures compared across engines, in order. */
const ENGINE_MEASURES = [
  'warmCallMs',
  'coldWorkerStartMs',
  'coldIframeStartMs',
  'killAfterDeadlineMs',
];
const ENGINE_NAMES = /** @type {Record<string, string>} */ ({
  chromium: 'Chromium',
  firefox: 'Firefox',
  webkit: 'WebKit',
});

/** The sandbox page's figures in each engine, side by side (p50 / p95). */
function engineSandboxSection() {
  const stored =
    /** @type {{ date: string; node: string; loadAverage?: number[]; engines: Record<string, { version: string; figures: Record<string, { p50: number; p95: number } | undefined> }> } | undefined} */ (
      readResults('sandbox-engines')
    );
  const title = '## Sandboxed tools in each engine';
  if (!stored)
    return sectionInReport(title) ?? `${title}\n\nNo figures yet: \`npm run bench -- sandbox\`.`;
  const engines = Object.entries(stored.engines);
  const rows = ENGINE_MEASURES.map((key) => [
    SELF_MEASURED_LABELS[key] ?? key,
    ...engines.map(([, { figures }]) => {
      const summary = figures[key];
      return summary ? `${formatNumber(summary.p50)} / ${formatNumber(summary.p95)}` : '–';
    }),
  ]);
  return `${title}

Measured ${stored.date} with the same production build and scripted model, one engine
after the other (Node ${stored.node}): ${engines
    .map(([engine, { version }]) => `${ENGINE_NAMES[engine] ?? engine} ${version}`)
    .join(', ')}. Each cell is p50 / p95 in ms. The kill figure is how long after its 100 ms
deadline a \`while(true)\` call resolved with its worker terminated (\`graceMs\` 30); the
thread's CPU stops later in Chromium (1.4–2 s) than in Firefox and WebKit (under 50 ms),
which no figure here waits for. Firefox and WebKit round \`performance.now()\` to 1 ms in
a page that is not cross-origin isolated, so their warm-call figures are at that
resolution.${stored.loadAverage ? ` Load average when it started: ${stored.loadAverage.map((load) => load.toFixed(1)).join(', ')} (2 cores).` : ''}

${table(['measure (p50 / p95, ms)', ...engines.map(([engine]) => ENGINE_NAMES[engine] ?? engine)], rows)}`;
}

const FAIRNESS = `## How fair each setup is

- **Same everything else.** One production build serves every contestant; each run gets a
  fresh page; all talk to the same local server through the Chat Completions API with
  streaming on; nobody retries (\`maxRetries: 0\` where the library has it; Airlock's
  default retries never trigger, as the server sends no errors).
- **Airlock does more per step.** It stores each step (messages, checkpoint, audit) in
  IndexedDB and builds the context from the store; the others keep the conversation in
  memory and store nothing. Its page tool is called from the worker over Comlink. All of
  this is in its wall time and per-step figures, none of it on the page.
- **Validation differs.** Airlock, the Vercel AI SDK and the Agents SDK validate the tool's
  arguments with zod (Airlock on the page, since the tool is a page tool); the hand-written
  loops only \`JSON.parse\` them.
- **The Agents SDK** runs with tracing disabled and the Chat Completions model given
  directly (equivalent to \`setOpenAIAPI('chat_completions')\`); it sends its zod tool as a
  strict schema. It needs \`openai@^6.46\`; the bench bundles that one copy for it (an app
  installing only the Agents SDK would have one), not Airlock's pinned \`openai\`.
- **The page tool is trivial.** Real page tools (DOM reads, fetches) cost the same for
  everyone and would narrow the differences in wall time, not on the page.
- **Zero latency is the worst case for the page.** A real model streams tens of tokens a
  second; here 2 000 chunks arrive in a fraction of a second, so per-chunk page work is
  concentrated. Per chunk the page's cost is the same at any speed.
- **The machine.** Figures taken on a shared, loaded machine are noisy (see the load
  average above); ratios within one round are steadier than absolute times.`;

/**
 * The sections written from peers.json, kept as they are when a run leaves the peers out (the
 * results files are not committed, so a fresh checkout has only BENCHMARKS.md and the
 * histories); "Run after run" is rebuilt from the history between the first two.
 */
const PEERS_HEADINGS = [
  '## Targets',
  '## Machine',
  '## Versions',
  '## The conversation',
  '## Results',
  '## Bundle sizes',
  '## Failed runs',
  '## Structured output and images',
  '## How fair each setup is',
];

/** Writes BENCHMARKS.md from whatever results are stored; a page with none keeps its section. */
export function writeReport() {
  const peers = /** @type {PeersFile | undefined} */ (readResults('peers'));
  const memory = /** @type {{ memory?: { appendStepMs?: Summary } } | undefined} */ (
    readResults('memory')
  )?.memory;
  const parts = [
    `# Benchmarks

Generated by \`npm run bench\` from the run's figures (\`bench/results/<page>.json\`, not
committed) and the histories beside them; a page the run left out keeps its section.
\`node bench/report.mjs\` regenerates it. Do not edit by hand. \`npm run bench:smoke\` runs
a tiny conversation through every contestant once and fails if one does not finish (no
figures).`,
  ];
  const peersHistory = readHistory(new URL('peers-history.json', resultsDir));
  if (peers) {
    parts.push(targetsSection(judgeTargets(peers, memory), noVerdictReason(peers.machine)));
    parts.push(consecutiveRunsSection(peersHistory));
    parts.push(...peersSections(peers));
    if (peers.failures.length > 0) {
      parts.push(
        `## Failed runs\n\n${table(
          ['contestant', 'round', 'error'],
          peers.failures.map((failure) => [
            failure.contestant,
            String(failure.round),
            failure.message.replaceAll('|', '\\|').replaceAll('\n', ' '),
          ]),
        )}`,
      );
    }
    parts.push(
      modalitiesSection(
        /** @type {import('./modalities-section.mjs').ModalitiesFile | undefined} */ (
          readResults('modalities')
        ),
      ),
    );
    parts.push(FAIRNESS);
  } else {
    // A bench of other pages only: the peers' sections stay as the last full run wrote them.
    const [targets, ...rest] = PEERS_HEADINGS.map((heading) => sectionInReport(heading));
    if (targets) parts.push(targets);
    if (peersHistory.length > 0) parts.push(consecutiveRunsSection(peersHistory));
    const kept = rest.flatMap((section) => section ?? []);
    parts.push(
      ...(targets || kept.length > 0
        ? kept
        : ['## Peers\n\nNo figures yet: `npm run bench -- peers`.']),
    );
  }
  parts.push(selfMeasuredSection('sandbox', 'Sandboxed tools'));
  parts.push(engineSandboxSection());
  parts.push(selfMeasuredSection('code', 'Code tool'));
  parts.push(selfMeasuredSection('memory', 'Memory'));
  parts.push(selfMeasuredSection('knowledge', 'Knowledge'));
  parts.push(selfMeasuredSection('mcp', 'MCP tools'));
  parts.push(selfMeasuredSection('ondevice', 'On-device model'));
  const scale = /** @type {import('./scale-section.mjs').ScaleFile | undefined} */ (
    readResults('scale')
  );
  const knowledge = /** @type {import('./scale-section.mjs').KnowledgeFile | undefined} */ (
    readResults('knowledge')
  );
  const scaleHistories = {
    scale: readHistory(new URL('scale-history.json', resultsDir)),
    knowledge: readHistory(new URL('knowledge-history.json', resultsDir)),
  };
  // Neither page in this run: the section stays as the last run of either wrote it.
  parts.push(
    (!scale && !knowledge ? sectionInReport(SCALE_HEADING) : undefined) ??
      scaleSection(scale, knowledge, scaleHistories),
  );
  // The soak and the proxy load test run on their own commands (`npm run soak`,
  // `npm run bench:proxy`): from their results when there are any, else their last sections.
  const soak = readResults('soak');
  const soakPart = soak
    ? soakSection(/** @type {import('./soak-section.mjs').SoakFigures} */ (soak))
    : sectionInReport(SOAK_HEADING);
  if (soakPart) parts.push(soakPart);
  const proxy = readResults('proxy');
  const proxyPart = proxy
    ? proxySection(/** @type {import('./proxy-section.mjs').ProxyFigures} */ (proxy))
    : sectionInReport(PROXY_HEADING);
  if (proxyPart) parts.push(proxyPart);
  writeFileSync(reportPath, `${parts.join('\n\n')}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) writeReport();
