// `npm run bench:proxy`: a load test of the proxy's Node adapter on 127.0.0.1. The same
// streamed chat completions go to the testing model server directly, through a bare
// pass-through relay (bench/proxy/relay-process.mjs: the floor, what any proxy costs here)
// and through the proxy (processes of their own: authorize, request policy, per-user limits
// reserved and settled, key redaction, the event-by-event relay), at the same concurrency. Four set-ups: 1 and 4
// proxy processes (the client spreads requests over them, as a load balancer would), each
// with the in-memory counter store and with the Redis store on one local `redis-server`
// (scripts/redis.mjs). Two loads per set-up:
//
// - latency: `concurrency` streams at once, each paced as a model streams (one event every
//   PACE_MS), so the load is a real one and not a queue for CPU; what the proxy adds to the
//   arrival of the first event (its per-request work) and of every event, at p50/p95/p99;
// - throughput: `concurrency` requests at once answered without pauses, back to back: how
//   many a second, and the proxy's CPU per request.
//
// Writes bench/results/proxy.json and the "Proxy gateway" section of BENCHMARKS.md.
//
//   npm run bench:proxy                       1 000 requests each way per load and set-up, 100 at once
//   node bench/proxy.mjs --requests=500 --concurrency=20
//   node bench/proxy.mjs --smoke              100 requests, 10 at once, no files written;
//                                             fails on any error (part of bench:smoke)
//   AIRLOCK_PROXY_PROF=1 node bench/proxy.mjs writes the proxies' CPU profiles to /tmp/proxyprof
//   node bench/proxy.mjs --against=/work/main --setups=1
//                                             also runs the proxy of another checkout (a worktree
//                                             of the revision before a change) as a side of its
//                                             own in the same rounds, first set-up only; printed,
//                                             no files written
//
// Not a test: nothing fails on a latency figure, only on errors.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../scripts/redis.mjs';
import { spliceProxySection } from './proxy-section.mjs';

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const option = (/** @type {string} */ name, /** @type {number} */ fallback) =>
  Number(
    new RegExp(`^--${name}=(\\d+)$`).exec(
      args.find((arg) => arg.startsWith(`--${name}=`)) ?? '',
    )?.[1] ?? fallback,
  );
const requests = option('requests', smoke ? 100 : 1000);
const concurrency = option('concurrency', smoke ? 10 : 100);
const warmup = Math.min(200, requests);
/** Another checkout whose proxy runs beside this one's, for a before/after in one run. */
const against = args.find((arg) => arg.startsWith('--against='))?.slice('--against='.length);
/** Only the first N set-ups (a comparison run); files are written only for a run of all four. */
const setupCount = option('setups', 4);
/** Rounds of direct-then-proxied requests. */
const ROUNDS = 4;
/** The paced upstream's pause between events, as a model streams tokens. */
const PACE_MS = 20;
/** The prompt the model server answers at PACE_MS; any other is answered at once. */
const PACED_PROMPT = 'Stream it at a model’s pace.';
const USERS = 50;
/** A reply of 24 words: a role chunk, 24 content chunks, a finish and a usage chunk, [DONE]. */
const REPLY = Array.from({ length: 24 }, (_, index) => `word${index}`).join(' ');
/** The set-ups measured: how many proxy processes, and where they count. */
const SETUPS = /** @type {const} */ ([
  { processes: 1, store: 'memory' },
  { processes: 1, store: 'redis' },
  { processes: 4, store: 'memory' },
  { processes: 4, store: 'redis' },
]);

const loadAtStart = loadavg();
const upstream = await startUpstream();
const apiKey = `sk-bench-${randomBytes(16).toString('hex')}`;
const redis = await startRedis();

/**
 * The testing model server in a process of its own (bench/proxy/upstream-process.mjs),
 * answering PACED_PROMPT at PACE_MS and anything else at once.
 */
async function startUpstream() {
  const child = fork(
    fileURLToPath(new URL('./proxy/upstream-process.mjs', import.meta.url)),
    [REPLY, String(PACE_MS), PACED_PROMPT],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const exited = once(child, 'exit');
  const [message] = await once(child, 'message');
  return {
    baseURL: /** @type {{ baseURL: string }} */ (message).baseURL,
    close: async () => {
      child.disconnect();
      await exited;
    },
  };
}

/**
 * A proxy process (bench/proxy/proxy-process.mjs) and its messages.
 * @param {{ redisUrl?: string; root?: string }} settings
 */
function startProxy(settings) {
  return startChild(
    './proxy/proxy-process.mjs',
    [upstream.baseURL, apiKey, JSON.stringify(settings)],
    [
      '--expose-gc',
      ...(process.env.AIRLOCK_PROXY_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/proxyprof'] : []),
    ],
  );
}

/** The floor: a bare pass-through relay (bench/proxy/relay-process.mjs). */
function startRelay() {
  return startChild('./proxy/relay-process.mjs', [upstream.baseURL], []);
}

/**
 * A child that serves on 127.0.0.1 under `/llm/v1`, answers `memory` with its CPU time, heap
 * and RSS, and stops on `stop`.
 * @param {string} script @param {string[]} args @param {string[]} execArgv
 */
async function startChild(script, args, execArgv) {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), args, {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  /** @type {Map<string, (value: any) => void>} */
  const waiting = new Map();
  child.on('message', (/** @type {any} */ message) => {
    waiting.get(message.type)?.(message);
    waiting.delete(message.type);
  });
  const nextMessage = (/** @type {string} */ type) =>
    new Promise((resolve) => waiting.set(type, resolve));
  const { port } = /** @type {{ port: number }} */ (await nextMessage('listening'));
  return {
    url: `http://127.0.0.1:${port}/llm/v1`,
    memory: async () => {
      const reply = nextMessage('memory');
      child.send({ type: 'memory' });
      const { heapUsed, rss, cpuMicros } =
        /** @type {{ heapUsed: number; rss: number; cpuMicros: number }} */ (await reply);
      return { heapUsed, rss, cpuMicros };
    },
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'stop' });
      await exited;
    },
  };
}

/** @param {string} content */
const bodyFor = (content) =>
  JSON.stringify({
    model: 'bench-model',
    messages: [{ role: 'user', content }],
    stream: true,
    stream_options: { include_usage: true },
  });
/** Answered at once, every chunk in one go: how many requests the proxy can carry. */
const INSTANT = bodyFor('Tell me something.');
/** Answered one chunk every PACE_MS, as a model streams: how much later each event arrives. */
const PACED = bodyFor(PACED_PROMPT);

/**
 * What one streamed request saw: when it ended and, for a paced one, when each SSE event
 * arrived. An error is a status other than 200 or a body that does not end with `[DONE]`.
 * @typedef {{ ms: number; ok: boolean; arrivals: number[] }} StreamResult
 */

/** How many failures have been printed; the first few say why. */
let failuresShown = 0;
/** Prints why a request to `base` failed, for the first five. @param {string} base @param {string} why */
const failed = (base, why) => {
  if (failuresShown++ < 5) console.error(`  a request to ${base} failed: ${why}`);
};

/**
 * One streamed request, timed from send. Each complete SSE event is stamped with the time
 * its last byte arrived (events that came in one read share it).
 * @param {Agent} agent @param {string} base @param {number} index @param {string} body
 * @returns {Promise<StreamResult>}
 */
function streamOnce(agent, base, index, body) {
  const started = performance.now();
  /** @type {number[]} */
  const arrivals = [];
  let text = '';
  let scanned = 0;
  const end = (/** @type {boolean} */ ok) =>
    /** @type {StreamResult} */ ({ ms: performance.now() - started, ok, arrivals });
  return new Promise((resolve) => {
    const outgoing = request(
      `${base}/chat/completions`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'x-user': `user-${index % USERS}`,
        },
      },
      (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          const now = performance.now() - started;
          text += chunk;
          for (
            let at = text.indexOf('\n\n', scanned);
            at >= 0;
            at = text.indexOf('\n\n', scanned)
          ) {
            arrivals.push(now);
            scanned = at + 2;
          }
        });
        response.on('end', () => {
          const ok =
            response.statusCode === 200 &&
            text.trimEnd().endsWith('data: [DONE]') &&
            !text.includes(apiKey);
          if (!ok) failed(base, `HTTP ${response.statusCode}: …${text.slice(-200)}`);
          resolve(end(ok));
        });
        response.on('error', (error) => {
          failed(base, `response ${error.message}`);
          resolve(end(false));
        });
      },
    );
    outgoing.on('error', (error) => {
      failed(base, `request ${error.message}`);
      resolve(end(false));
    });
    outgoing.end(body);
  });
}

/**
 * `count` requests to `bases` in turn (as a load balancer would spread them), `lanes` at a
 * time, over keep-alive connections.
 * @param {string | string[]} bases @param {number} count @param {string} body
 */
async function phase(bases, count, body) {
  const targets = Array.isArray(bases) ? bases : [bases];
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  /** @type {StreamResult[]} */
  const results = [];
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < count) {
      const index = next++;
      results.push(await streamOnce(agent, targets[index % targets.length] ?? '', index, body));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const wallMs = performance.now() - started;
  agent.destroy();
  return { results, wallMs };
}

/**
 * A paced request's latencies: its first event's arrival after the send, and each event's
 * arrival after the send less the pauses the upstream made before it (event i is written
 * i × PACE_MS after the first). The upstream's timers run late by a little more each
 * pause, the same whether the stream is relayed or not, so only the difference between
 * direct and proxied is the proxy's.
 * @param {StreamResult} result
 */
function pacedLatencies(result) {
  return {
    firstEvent: result.arrivals[0] ?? Number.NaN,
    everyEvent: result.arrivals.map((arrival, index) => arrival - index * PACE_MS),
  };
}

/** @param {number[]} values @param {number} q */
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const round = (/** @type {number} */ value) => Math.round(value * 100) / 100;
const log = (/** @type {string} */ line) => console.log(line);

/** p50, p95 and p99 of `times`. @param {number[]} times */
const percentiles = (times) => ({
  p50: round(quantile(times, 0.5)),
  p95: round(quantile(times, 0.95)),
  p99: round(quantile(times, 0.99)),
});

/**
 * Direct, floor (the bare relay) and proxied percentiles of one latency; what the proxy adds
 * over direct, and over the floor (Airlock's own share).
 * @param {number[]} direct @param {number[]} floor @param {number[]} proxied
 */
function compared(direct, floor, proxied) {
  const d = percentiles(direct);
  const f = percentiles(floor);
  const p = percentiles(proxied);
  const less = (/** @type {typeof p} */ a, /** @type {typeof p} */ b) => ({
    p50: round(a.p50 - b.p50),
    p95: round(a.p95 - b.p95),
    p99: round(a.p99 - b.p99),
  });
  return { direct: d, floor: f, proxied: p, added: less(p, d), overFloor: less(p, f) };
}

/** @type {Array<Awaited<ReturnType<typeof startProxy>>>} */
let proxies = [];
/** @type {Array<Awaited<ReturnType<typeof startRelay>>>} */
let relays = [];
/** @type {Array<Awaited<ReturnType<typeof startProxy>>>} */
let befores = [];
try {
  log(
    `Proxy bench: ${requests} streamed requests each way per load and set-up, ${concurrency} at once${smoke ? ' (smoke)' : ''}…`,
  );
  const results = [];
  /** @type {{ after: number; heapUsed: number; rss: number; cpuMicros: number }[]} */
  let memorySamples = [];
  for (const setup of SETUPS.slice(0, setupCount)) {
    const storeSettings = setup.store === 'redis' ? { redisUrl: redis.url } : {};
    befores = against
      ? await Promise.all(
          Array.from({ length: setup.processes }, () =>
            startProxy({ ...storeSettings, root: against }),
          ),
        )
      : [];
    const beforeUrls = befores.map((proxy) => proxy.url);
    proxies = await Promise.all(
      Array.from({ length: setup.processes }, () =>
        startProxy(setup.store === 'redis' ? { redisUrl: redis.url } : {}),
      ),
    );
    relays = await Promise.all(Array.from({ length: setup.processes }, startRelay));
    const urls = proxies.map((proxy) => proxy.url);
    const relayUrls = relays.map((relay) => relay.url);
    const cpuOf = async (/** @type {typeof proxies} */ children) =>
      (await Promise.all(children.map((child) => child.memory()))).reduce(
        (sum, sample) => sum + sample.cpuMicros,
        0,
      );
    await phase(upstream.baseURL, warmup, INSTANT);
    await phase(relayUrls, warmup, INSTANT);
    await phase(urls, warmup, INSTANT);
    if (against) await phase(beforeUrls, warmup, INSTANT);
    const first = await proxies[0]?.memory();
    const samples = first ? [{ after: 0, ...first }] : [];
    /** @typedef {{ results: StreamResult[]; wallMs: number }} Side */
    const sides = () => ({
      direct: /** @type {Side[]} */ ([]),
      floor: /** @type {Side[]} */ ([]),
      proxied: /** @type {Side[]} */ ([]),
      before: /** @type {Side[]} */ ([]),
    });
    const paced = sides();
    const instant = sides();
    let proxyCpuMicros = 0;
    let relayCpuMicros = 0;
    let beforeCpuMicros = 0;
    // Alternating rounds, so a change in the machine's load (it is shared) falls on every side.
    const count = Math.ceil(requests / ROUNDS);
    for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
      paced.direct.push(await phase(upstream.baseURL, count, PACED));
      paced.floor.push(await phase(relayUrls, count, PACED));
      paced.proxied.push(await phase(urls, count, PACED));
      if (against) paced.before.push(await phase(beforeUrls, count, PACED));
      instant.direct.push(await phase(upstream.baseURL, count, INSTANT));
      const relayBefore = await cpuOf(relays);
      instant.floor.push(await phase(relayUrls, count, INSTANT));
      relayCpuMicros += (await cpuOf(relays)) - relayBefore;
      const before = await cpuOf(proxies);
      instant.proxied.push(await phase(urls, count, INSTANT));
      // Between rounds, with nothing in flight: a full GC then would stall requests and skew the latencies.
      proxyCpuMicros += (await cpuOf(proxies)) - before;
      if (against) {
        const beforeStart = await cpuOf(befores);
        instant.before.push(await phase(beforeUrls, count, INSTANT));
        beforeCpuMicros += (await cpuOf(befores)) - beforeStart;
      }
      const after = await proxies[0]?.memory();
      if (after) samples.push({ after: (roundIndex + 1) * count * 2, ...after });
    }
    const all = (/** @type {Side[]} */ side) => side.flatMap((part) => part.results);
    const errors = (/** @type {Side[]} */ side) => all(side).filter((result) => !result.ok).length;
    const perSecond = (/** @type {Side[]} */ side) =>
      round((all(side).length / side.reduce((sum, part) => sum + part.wallMs, 0)) * 1000);
    const latencies = (/** @type {Side[]} */ side) =>
      all(side)
        .filter((result) => result.ok)
        .map(pacedLatencies);
    const direct = latencies(paced.direct);
    const floor = latencies(paced.floor);
    const proxied = latencies(paced.proxied);
    const name = `${setup.processes} process${setup.processes > 1 ? 'es' : ''}, ${setup.store === 'redis' ? 'Redis' : 'memory'} store`;
    const figures = {
      name,
      processes: setup.processes,
      store: setup.store,
      firstEvent: compared(
        direct.map((latency) => latency.firstEvent),
        floor.map((latency) => latency.firstEvent),
        proxied.map((latency) => latency.firstEvent),
      ),
      everyEvent: compared(
        direct.flatMap((latency) => latency.everyEvent),
        floor.flatMap((latency) => latency.everyEvent),
        proxied.flatMap((latency) => latency.everyEvent),
      ),
      throughput: {
        direct: perSecond(instant.direct),
        floor: perSecond(instant.floor),
        proxied: perSecond(instant.proxied),
      },
      proxyCpuMsPerRequest: round(proxyCpuMicros / 1000 / all(instant.proxied).length),
      floorCpuMsPerRequest: round(relayCpuMicros / 1000 / all(instant.floor).length),
      errors: [paced, instant]
        .flatMap((load) => [load.direct, load.floor, load.proxied])
        .reduce((sum, side) => sum + errors(side), 0),
    };
    results.push(figures);
    const line = (/** @type {{ p50: number; p95: number; p99: number }} */ p) =>
      `p50 ${p.p50}, p95 ${p.p95}, p99 ${p.p99} ms`;
    log(`  ${name}:`);
    for (const [label, latency] of /** @type {const} */ ([
      ['first event', figures.firstEvent],
      ['every event, less its pauses', figures.everyEvent],
    ])) {
      log(
        `    ${label}: direct ${line(latency.direct)}; bare relay ${line(latency.floor)}; proxied ${line(latency.proxied)}`,
      );
      log(
        `      added over direct ${line(latency.added)}; over the bare relay ${line(latency.overFloor)}`,
      );
    }
    log(
      `    throughput: direct ${figures.throughput.direct}/s, bare relay ${figures.throughput.floor}/s, proxied ${figures.throughput.proxied}/s; CPU per request: proxy ${figures.proxyCpuMsPerRequest} ms, bare relay ${figures.floorCpuMsPerRequest} ms; ${figures.errors} errors (direct ${errors(paced.direct) + errors(instant.direct)}, bare relay ${errors(paced.floor) + errors(instant.floor)}, proxy ${errors(paced.proxied) + errors(instant.proxied)})`,
    );
    if (against) {
      const before = latencies(paced.before);
      const firstEvent = compared(
        direct.map((latency) => latency.firstEvent),
        floor.map((latency) => latency.firstEvent),
        before.map((latency) => latency.firstEvent),
      );
      const everyEvent = compared(
        direct.flatMap((latency) => latency.everyEvent),
        floor.flatMap((latency) => latency.everyEvent),
        before.flatMap((latency) => latency.everyEvent),
      );
      log(`    the proxy of ${against}, in the same rounds:`);
      log(
        `      first event: proxied ${line(firstEvent.proxied)}; over the bare relay ${line(firstEvent.overFloor)}`,
      );
      log(
        `      every event: proxied ${line(everyEvent.proxied)}; over the bare relay ${line(everyEvent.overFloor)}`,
      );
      log(
        `      throughput ${perSecond(instant.before)}/s; CPU per request ${round(beforeCpuMicros / 1000 / all(instant.before).length)} ms; ${errors(paced.before) + errors(instant.before)} errors`,
      );
    }
    if (setup.processes === 1 && setup.store === 'memory') memorySamples = samples;
    await Promise.all([...proxies, ...relays, ...befores].map((child) => child.stop()));
    proxies = [];
    relays = [];
    befores = [];
  }
  const report = {
    at: new Date().toISOString(),
    requests,
    concurrency,
    rounds: ROUNDS,
    // Which of the proxy's shells served (bench/proxy/proxy-process.mjs): results from before it said are the Fetch-API one's.
    shell: 'node',
    replyChunks: 24,
    paceMs: PACE_MS,
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      node: process.version,
    },
    loadAverage: { start: loadAtStart, end: loadavg() },
    setups: results,
    memory: memorySamples,
  };
  const mb = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1);
  log(`  proxy heapUsed (MB): ${memorySamples.map((sample) => mb(sample.heapUsed)).join(', ')}`);
  log(`  proxy RSS (MB):      ${memorySamples.map((sample) => mb(sample.rss)).join(', ')}`);
  const errors = results.reduce((sum, figures) => sum + figures.errors, 0);
  if (errors > 0) {
    process.exitCode = 1;
    console.error(`Proxy bench: ${errors} requests failed.`);
  } else if (!smoke && !against && setupCount >= SETUPS.length) {
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/proxy.json', `${JSON.stringify(report, null, 2)}\n`);
    spliceProxySection();
    log('Wrote bench/results/proxy.json and the "Proxy gateway" section of BENCHMARKS.md.');
  }
} finally {
  await Promise.all([...proxies, ...relays, ...befores].map((child) => child.stop()));
  await upstream.close();
  await redis.close();
}
