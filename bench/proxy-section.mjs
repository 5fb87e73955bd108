// The "Proxy gateway" section of BENCHMARKS.md, from bench/results/proxy.json (written by
// `npm run bench:proxy`). `node bench/proxy-section.mjs` puts it in BENCHMARKS.md in place
// of the section that is there, leaving every other section alone; `bench/report.mjs` keeps it.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spliceSection } from './lib/report-section.mjs';

export const PROXY_HEADING = '## Proxy gateway';
const resultsPath = new URL('./results/proxy.json', import.meta.url);

/**
 * @typedef {{ p50: number; p95: number; p99: number }} Percentiles
 * @typedef {{ direct: Percentiles; floor: Percentiles; proxied: Percentiles; added: Percentiles; overFloor: Percentiles }} Compared
 * @typedef {{
 *   name: string; processes: number; store: 'memory' | 'redis';
 *   firstEvent: Compared; everyEvent: Compared;
 *   throughput: { direct: number; floor: number; proxied: number };
 *   proxyCpuMsPerRequest: number; floorCpuMsPerRequest: number; errors: number;
 * }} SetupFigures
 * @typedef {{
 *   at: string; requests: number; concurrency: number; rounds: number; replyChunks: number; paceMs: number;
 *   shell?: 'node' | 'fetch';
 *   machine: { cores: number; cpu: string; node: string };
 *   loadAverage: { start: number[]; end: number[] };
 *   setups: SetupFigures[];
 *   memory: { after: number; heapUsed: number; rss: number }[];
 * }} ProxyFigures
 */

/** `p50 / p95 / p99 ms`. @param {Percentiles} p */
const triple = (p) => `${p.p50} / ${p.p95} / ${p.p99} ms`;

/** The section for `figures`. @param {ProxyFigures} figures */
export function proxySection(figures) {
  const mb = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1);
  const heap = figures.memory.map((sample) => mb(sample.heapUsed)).join(', ');
  const rss = figures.memory.map((sample) => mb(sample.rss)).join(', ');
  const load = (/** @type {number[]} */ values) =>
    values.map((value) => value.toFixed(2)).join(' ');
  const latencyRows = (/** @type {'firstEvent' | 'everyEvent'} */ which) =>
    figures.setups
      .map((setup) => {
        const latency = setup[which];
        return `| ${setup.name} | ${triple(latency.direct)} | ${triple(latency.floor)} | ${triple(latency.proxied)} | **${triple(latency.added)}** | ${triple(latency.overFloor)} |`;
      })
      .join('\n');
  const latencyTable = (/** @type {'firstEvent' | 'everyEvent'} */ which) =>
    `| set-up | direct p50 / p95 / p99 | bare relay | proxy | **added** (proxy − direct) | proxy − bare relay |
|---|---|---|---|---|---|
${latencyRows(which)}`;
  const throughputRows = figures.setups
    .map(
      (setup) =>
        `| ${setup.name} | ${setup.throughput.direct} | ${setup.throughput.floor} | ${setup.throughput.proxied} | ${setup.floorCpuMsPerRequest} ms | ${setup.proxyCpuMsPerRequest} ms | ${setup.errors} |`,
    )
    .join('\n');
  const one = figures.setups[0];
  const worst = one ? Math.max(one.firstEvent.added.p95, one.everyEvent.added.p95) : Number.NaN;
  const floorWorst = one
    ? Math.max(
        one.firstEvent.floor.p95 - one.firstEvent.direct.p95,
        one.everyEvent.floor.p95 - one.everyEvent.direct.p95,
      )
    : Number.NaN;
  // What the proxy itself costs: its p95 over the bare relay's, first event and every event.
  const overFloorWorst = one
    ? Math.max(one.firstEvent.overFloor.p95, one.everyEvent.overFloor.p95)
    : Number.NaN;
  const shellName =
    figures.shell === 'node'
      ? 'Node shell\n(`createNodeHandler`)'
      : 'Fetch-API shell under its Node adapter\n(`toNodeListener(createProxyHandler())`; these figures are from before the Node shell)';
  const cpuRatio = one ? one.proxyCpuMsPerRequest / one.floorCpuMsPerRequest : Number.NaN;
  const goal =
    floorWorst > 2
      ? `**The goal, ≤ 2 ms p95 added at ${figures.concurrency} concurrent streams on one process, cannot be read against direct on this machine**:
the bare relay alone adds ${floorWorst.toFixed(2)} ms at p95 over direct in the same run (the proxy adds ${worst} ms), so no proxy process
can meet it here. The figure that shows what the proxy itself costs is what it adds **over the bare relay**: **${overFloorWorst} ms at p95**
(the larger of first event and every event), ${overFloorWorst <= 2 ? 'within' : 'over'} the 2 ms. The merger's runs on a quiet machine are the ones to judge it by.`
      : `**The goal, ≤ 2 ms p95 added at ${figures.concurrency} concurrent streams on one process, ${worst <= 2 ? 'is met' : `is missed here (${worst} ms)`}**;
the bare relay alone adds ${floorWorst.toFixed(2)} ms at p95 over direct in the same run, and the proxy ${overFloorWorst} ms over the bare relay.`;
  return `${PROXY_HEADING}

\`npm run bench:proxy\` (${figures.at.slice(0, 10)}; ${figures.machine.cores} cores, ${figures.machine.cpu}, Node ${figures.machine.node};
load average ${load(figures.loadAverage.start)} at the start, ${load(figures.loadAverage.end)} at the end). The same streamed chat
completions go to the testing model server directly, through a **bare relay** and through the proxy's ${shellName}, the relays and proxies in processes of their own on 127.0.0.1 (with several, the client spreads
requests over them as a load balancer would): **${figures.requests} per load and side, ${figures.concurrency} at once**, in ${figures.rounds}
alternating rounds (direct, bare relay, proxy) so a change in the machine's load falls on every side. Each reply is a
role chunk, ${figures.replyChunks} content chunks, a finish and a usage chunk and \`[DONE]\`. The proxy runs the whole gateway: an
\`authorize\` hook, the request policy, per-user limits (50 users) reserved and settled with a cost budget, key redaction
and the event-by-event relay; counting in the process's memory or in one local \`redis-server\`. The bare relay
(bench/proxy/relay-process.mjs) is the floor, the peer this section compares with: \`node:http\` piping bytes both ways
with no check at all, so what it adds over direct is what any proxy costs on this machine (one more process, two more
sockets, more wake-ups per event), and what the proxy adds over it is Airlock's own. The client, the model server,
Redis, the relays and the proxies share the machine's cores.

**Latency, streams at a model's pace** (one event every ${figures.paceMs} ms, ${figures.concurrency} streams at once). "Added" is the
proxy's percentile less the direct one.

First event after the send (the per-request work: authorize, policy, reserve, the upstream request):

${latencyTable('firstEvent')}

Every event after the send, less the pauses the upstream made before it (the per-request work plus the relay):

${latencyTable('everyEvent')}

${goal}
The direct columns are the harness's own lateness: the model server's pauses run late as its process gets busy. When
direct events already come tens of ms late, the machine is saturated and "added" is mostly the wait for a core: the
CPU per request below, times the requests a second ${figures.concurrency} paced streams make (about ${Math.round(figures.concurrency / (((figures.replyChunks + 3) * figures.paceMs) / 1000))}), is the share of a
core a relay needs.

**Throughput, replies without pauses** (${figures.concurrency} requests at once, back to back): how many requests a second each
side carries, and the CPU time per request of the bare relays and of the proxies.

| set-up | direct req/s | bare relay req/s | proxy req/s | bare relay CPU per request | proxy CPU per request | errors (both loads, all sides) |
|---|---|---|---|---|---|---|
${throughputRows}

On one process the proxy spends ${cpuRatio.toFixed(1)} times the bare relay's CPU per request. With ${figures.machine.cores} cores for everything,
more processes cannot add throughput here; the 4-process rows show what spreading and sharing the counters cost, not
what four machines would give. Where the proxy's CPU goes (\`AIRLOCK_PROXY_PROF=1 node bench/proxy.mjs --smoke\` writes
each proxy's \`--cpu-prof\` to /tmp/proxyprof): on 2026-12-07, the Node shell, replies without pauses (400 requests, 20 at once),
start-up and idle left out, each sample counted to the nearest frame of a known kind: Node's HTTP server, client and sockets
(their writes included) 61 %, garbage collection 16 %, Airlock's own proxy code (policy, reserve/settle, redaction, the
event relay) 14 %, undici 3 % (the \`Request\` the \`authorize\` hook is given, the one Fetch-API object the Node shell makes;
none with \`allowAnonymous\`). The same profile of the Fetch-API shell it replaced, on the same day: Node's HTTP 36 %, the
Fetch-API machinery 36 % (undici's \`fetch\` and its \`Request\`/\`Response\`/\`Headers\` 24 %, web streams and abort signals
12 %), Airlock's code 14 %, garbage collection 7 %. \`node bench/proxy.mjs --against=<another checkout> --setups=1\` runs
another revision's proxy in the same rounds (printed only), for a before/after on one machine state.

The first proxy process's memory (1 process, memory store) after a full GC, after the warm-up and after each round
(every ${Math.floor((figures.requests * 2) / (figures.memory.length - 1 || 1))} proxied requests): heapUsed ${heap} MB; RSS ${rss} MB.`;
}

/** Puts the section from proxy.json into BENCHMARKS.md, replacing the old one or appending. */
export function spliceProxySection() {
  if (!existsSync(resultsPath))
    throw new Error('No bench/results/proxy.json: run `npm run bench:proxy`.');
  const section = proxySection(JSON.parse(readFileSync(resultsPath, 'utf8')));
  spliceSection(PROXY_HEADING, section);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) spliceProxySection();
