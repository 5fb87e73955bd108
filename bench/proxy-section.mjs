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
 * @typedef {{
 *   name: string; processes: number; store: 'memory' | 'redis';
 *   direct: Percentiles & { errors: number; perSecond: number };
 *   proxied: Percentiles & { errors: number; perSecond: number };
 *   added: Percentiles;
 *   proxyCpuMsPerRequest: number;
 * }} SetupFigures
 * @typedef {{
 *   at: string; requests: number; concurrency: number; rounds: number; replyChunks: number;
 *   machine: { cores: number; cpu: string; node: string };
 *   loadAverage: { start: number[]; end: number[] };
 *   setups: SetupFigures[];
 *   sequential: { requests: number; directP50: number; proxiedP50: number; addedP50: number; addedP95: number; errors: number };
 *   memory: { after: number; heapUsed: number; rss: number }[];
 * }} ProxyFigures
 */

/** The section for `figures`. @param {ProxyFigures} figures */
export function proxySection(figures) {
  const mb = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1);
  const heap = figures.memory.map((sample) => mb(sample.heapUsed)).join(', ');
  const rss = figures.memory.map((sample) => mb(sample.rss)).join(', ');
  const load = (/** @type {number[]} */ values) =>
    values.map((value) => value.toFixed(2)).join(' ');
  const rows = figures.setups
    .map(
      (setup) =>
        `| ${setup.name} | ${setup.direct.p50} / ${setup.direct.p95} / ${setup.direct.p99} ms | ${setup.proxied.p50} / ${setup.proxied.p95} / ${setup.proxied.p99} ms | **${setup.added.p50} / ${setup.added.p95} / ${setup.added.p99} ms** | ${setup.direct.perSecond} | ${setup.proxied.perSecond} | ${setup.proxyCpuMsPerRequest} ms | ${setup.direct.errors + setup.proxied.errors} |`,
    )
    .join('\n');
  return `${PROXY_HEADING}

\`npm run bench:proxy\` (${figures.at.slice(0, 10)}; ${figures.machine.cores} cores, ${figures.machine.cpu}, Node ${figures.machine.node};
load average ${load(figures.loadAverage.start)} at the start, ${load(figures.loadAverage.end)} at the end): **${figures.requests}
streamed chat completions per set-up, ${figures.concurrency} at once**, sent to the testing model server directly and then through the
proxy's Node adapter (\`toNodeListener\`, processes of their own, on 127.0.0.1; with several, the client spreads requests
over them as a load balancer would), each a reply of ${figures.replyChunks} content chunks plus role, finish and usage chunks,
in ${figures.rounds} alternating rounds (direct, then proxied) so a change in the machine's load falls on both. The proxy ran
the whole gateway: an \`authorize\` hook, the request policy, per-user limits (50 users) reserved and settled with a cost
budget, key redaction and the event-by-event relay; counting in this process's memory or in one local \`redis-server\`.
Latency is send to last byte, per request; the client, the model server, Redis and the proxies share the machine's cores.
"Added" is the proxied percentile less the direct one.

| set-up | direct p50 / p95 / p99 | proxied p50 / p95 / p99 | **added p50 / p95 / p99** | direct req/s | proxied req/s | proxy CPU per request | errors |
|---|---|---|---|---|---|---|---|
${rows}

One proxy process, memory store, one request at a time (${figures.sequential.requests} each way): added p50 ${figures.sequential.addedP50} ms, p95 ${figures.sequential.addedP95} ms (${figures.sequential.errors} errors).
At ${figures.concurrency} at once the added latency is mostly queueing for CPU on a shared machine: requests per second
times CPU per request is the share of a core the proxies got. One at a time shows what a request pays when nothing queues.
With ${figures.machine.cores} cores for everything, more processes cannot scale throughput here; the 4-process rows show what
spreading costs, not what four machines would give.

**The goal, ≤ 2 ms p95 added at ${figures.concurrency} concurrent streams on one process, ${(figures.setups[0]?.added.p95 ?? Number.POSITIVE_INFINITY) <= 2 ? 'is met' : `is missed here (${figures.setups[0]?.added.p95} ms)`}.**
Where the time goes (\`AIRLOCK_PROXY_PROF=1 node bench/proxy.mjs --smoke --requests=400 --concurrency=100\`, the
1-process memory-store proxy's \`--cpu-prof\`, 2026-12-06, start-up and idle left out): Node's HTTP server, sockets and
their writes 28 %, undici (the \`fetch\` to the upstream and the Fetch-API \`Request\`/\`Response\` objects) 19 %, garbage
collection 15 %, Airlock's own proxy code (policy, reserve/settle, redaction, relay) 9 %, web streams 6 %. The limits are
not where the time goes; the Fetch-API shape of the handler (a \`Request\` built from each Node request, an undici
\`fetch\` upstream, a web stream relayed back event by event, one socket write each) is. Lowering it means a Node-only
path (\`node:http\` upstream, batched writes), a decision this bench informs but does not make.

The first proxy process's memory (1 process, memory store) after a full GC, after the warm-up and after each round
(every ${Math.floor(figures.requests / (figures.memory.length - 1 || 1))} proxied requests): heapUsed ${heap} MB; RSS ${rss} MB.`;
}

/** Puts the section from proxy.json into BENCHMARKS.md, replacing the old one or appending. */
export function spliceProxySection() {
  if (!existsSync(resultsPath))
    throw new Error('No bench/results/proxy.json: run `npm run bench:proxy`.');
  const section = proxySection(JSON.parse(readFileSync(resultsPath, 'utf8')));
  spliceSection(PROXY_HEADING, section);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) spliceProxySection();
