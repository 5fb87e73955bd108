// The "Proxy gateway" section of BENCHMARKS.md, from bench/results/proxy.json (written by
// `npm run bench:proxy`). `node bench/proxy-section.mjs` puts it in BENCHMARKS.md in place
// of the section that is there, leaving every other section alone; `bench/report.mjs` keeps it.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spliceSection } from './lib/report-section.mjs';

export const PROXY_HEADING = '## Proxy gateway';
const resultsPath = new URL('./results/proxy.json', import.meta.url);

/**
 * @typedef {{
 *   at: string; requests: number; concurrency: number; rounds: number; replyChunks: number;
 *   machine: { cores: number; cpu: string; node: string };
 *   loadAverage: { start: number[]; end: number[] };
 *   direct: { p50: number; p95: number; errors: number; perSecond: number };
 *   proxied: { p50: number; p95: number; errors: number; perSecond: number };
 *   added: { p50: number; p95: number };
 *   sequential: { requests: number; directP50: number; proxiedP50: number; addedP50: number; addedP95: number; errors: number };
 *   proxyCpuMsPerRequest: number;
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
  return `${PROXY_HEADING}

\`npm run bench:proxy\` (${figures.at.slice(0, 10)}; ${figures.machine.cores} cores, ${figures.machine.cpu}, Node ${figures.machine.node};
load average ${load(figures.loadAverage.start)} at the start, ${load(figures.loadAverage.end)} at the end): **${figures.requests}
streamed chat completions, ${figures.concurrency} at once**, sent to the testing model server directly and then through the
proxy's Node adapter (\`toNodeListener\`, its own process, on 127.0.0.1), each a reply of ${figures.replyChunks} content chunks
plus role, finish and usage chunks, in ${figures.rounds} alternating rounds (direct, then proxied) so a change in the
machine's load falls on both. The proxy ran the whole gateway: an \`authorize\` hook, the request policy, per-user
counters (50 users) with a cost budget, key redaction and the event-by-event relay. Latency is send to last byte, per
request; the client, the model server and the proxy share the machine's cores.

| | p50 | p95 | requests/s | errors |
|---|---|---|---|---|
| direct to the model server | ${figures.direct.p50} ms | ${figures.direct.p95} ms | ${figures.direct.perSecond} | ${figures.direct.errors} |
| through the proxy | ${figures.proxied.p50} ms | ${figures.proxied.p95} ms | ${figures.proxied.perSecond} | ${figures.proxied.errors} |
| **added by the proxy** | **${figures.added.p50} ms** | **${figures.added.p95} ms** | | |
| added, one request at a time (${figures.sequential.requests} each way) | ${figures.sequential.addedP50} ms | ${figures.sequential.addedP95} ms | | ${figures.sequential.errors} |

The proxy process used **${figures.proxyCpuMsPerRequest} ms of CPU per proxied request** (user + system, over the rounds).
At ${figures.concurrency} at once the added latency is mostly queueing for that CPU on a shared machine: requests per second
times CPU per request is the share of a core the proxy got. One at a time shows what a request pays when nothing queues.

The proxy process's memory after a full GC, after the warm-up and after each round (every ${Math.floor(figures.requests / (figures.memory.length - 1 || 1))} proxied requests):
heapUsed ${heap} MB; RSS ${rss} MB.`;
}

/** Puts the section from proxy.json into BENCHMARKS.md, replacing the old one or appending. */
export function spliceProxySection() {
  if (!existsSync(resultsPath))
    throw new Error('No bench/results/proxy.json: run `npm run bench:proxy`.');
  const section = proxySection(JSON.parse(readFileSync(resultsPath, 'utf8')));
  spliceSection(PROXY_HEADING, section);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) spliceProxySection();
