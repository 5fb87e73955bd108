// `npm run bench:proxy`: a load test of the proxy's Node adapter on 127.0.0.1. The same
// streamed chat completions go to the testing model server directly and through the proxy
// (processes of their own: authorize, request policy, per-user limits reserved and settled,
// key redaction, the event-by-event relay), at the same concurrency; the difference is what
// the proxy adds. Four set-ups: 1 and 4 proxy processes (the client spreads requests over
// them, as a load balancer would), each with the in-memory counter store and with the Redis
// store on one local `redis-server` (scripts/redis.mjs). Writes bench/results/proxy.json and
// the "Proxy gateway" section of BENCHMARKS.md.
//
//   npm run bench:proxy                       1 000 requests each way per set-up, 100 at once
//   node bench/proxy.mjs --requests=500 --concurrency=20
//   node bench/proxy.mjs --smoke              100 requests, 10 at once, no files written;
//                                             fails on any error (part of bench:smoke)
//   AIRLOCK_PROXY_PROF=1 node bench/proxy.mjs writes the proxies' CPU profiles to /tmp/proxyprof
//
// Not a test: nothing fails on a latency figure, only on errors.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../scripts/redis.mjs';
import { loadSourceModule } from './proxy/load-module.mjs';
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
/** Rounds of direct-then-proxied requests. */
const ROUNDS = 4;
/** Requests sent one at a time each way, after the rounds (one process, memory store). */
const SEQUENTIAL = smoke ? 20 : 200;
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
const { startModelServer } = await loadSourceModule('/src/testing.ts');
const models = await startModelServer();
const session = models.createSession(() => ({ text: REPLY }));
const apiKey = `sk-bench-${randomBytes(16).toString('hex')}`;
const redis = await startRedis();

/**
 * A proxy process (bench/proxy/proxy-process.mjs) and its messages.
 * @param {{ redisUrl?: string }} settings
 */
async function startProxy(settings) {
  const child = fork(
    fileURLToPath(new URL('./proxy/proxy-process.mjs', import.meta.url)),
    [session.baseURL, apiKey, JSON.stringify(settings)],
    {
      execArgv: [
        '--expose-gc',
        ...(process.env.AIRLOCK_PROXY_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/proxyprof'] : []),
      ],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
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

const body = JSON.stringify({
  model: 'bench-model',
  messages: [{ role: 'user', content: 'Tell me something.' }],
  stream: true,
  stream_options: { include_usage: true },
});

/**
 * One streamed request, timed from send to the end of its body. An error is a status other
 * than 200 or a body that does not end with `[DONE]`.
 * @param {Agent} agent @param {string} base @param {number} index
 * @returns {Promise<{ ms: number; ok: boolean }>}
 */
function streamOnce(agent, base, index) {
  const started = performance.now();
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
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({
            ms: performance.now() - started,
            ok:
              response.statusCode === 200 &&
              text.trimEnd().endsWith('data: [DONE]') &&
              !text.includes(apiKey),
          }),
        );
        response.on('error', () => resolve({ ms: performance.now() - started, ok: false }));
      },
    );
    outgoing.on('error', () => resolve({ ms: performance.now() - started, ok: false }));
    outgoing.end(body);
  });
}

/**
 * `count` requests to `bases` in turn (as a load balancer would spread them), `lanes` at a
 * time, over keep-alive connections.
 * @param {string | string[]} bases @param {number} count @param {number} [lanes]
 */
async function phase(bases, count, lanes = concurrency) {
  const targets = Array.isArray(bases) ? bases : [bases];
  const agent = new Agent({ keepAlive: true, maxSockets: lanes });
  /** @type {number[]} */
  const times = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < count) {
      const index = next++;
      const result = await streamOnce(agent, targets[index % targets.length] ?? '', index);
      times.push(result.ms);
      if (!result.ok) errors++;
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  const wallMs = performance.now() - started;
  agent.destroy();
  return { times, errors, wallMs };
}

/**
 * Adds a round's figures to the running totals.
 * @param {{ times: number[]; errors: number; wallMs: number }} total
 * @param {{ times: number[]; errors: number; wallMs: number }} part
 */
function absorb(total, part) {
  total.times.push(...part.times);
  total.errors += part.errors;
  total.wallMs += part.wallMs;
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

/** @type {Array<Awaited<ReturnType<typeof startProxy>>>} */
let proxies = [];
try {
  log(
    `Proxy bench: ${requests} streamed requests each way per set-up, ${concurrency} at once${smoke ? ' (smoke)' : ''}…`,
  );
  const results = [];
  /** @type {{ after: number; heapUsed: number; rss: number; cpuMicros: number }[]} */
  let memorySamples = [];
  /** @type {Record<string, number>} */
  let sequential = {};
  for (const setup of SETUPS) {
    proxies = await Promise.all(
      Array.from({ length: setup.processes }, () =>
        startProxy(setup.store === 'redis' ? { redisUrl: redis.url } : {}),
      ),
    );
    const urls = proxies.map((proxy) => proxy.url);
    const cpuOf = async () =>
      (await Promise.all(proxies.map((proxy) => proxy.memory()))).reduce(
        (sum, sample) => sum + sample.cpuMicros,
        0,
      );
    await phase(session.baseURL, warmup);
    await phase(urls, warmup);
    const first = await proxies[0]?.memory();
    const samples = first ? [{ after: 0, ...first }] : [];
    let proxyCpuMicros = 0;
    const direct = { times: /** @type {number[]} */ ([]), errors: 0, wallMs: 0 };
    const proxied = { times: /** @type {number[]} */ ([]), errors: 0, wallMs: 0 };
    // Alternating rounds, so a change in the machine's load (it is shared) falls on both sides.
    for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
      const count = Math.ceil(requests / ROUNDS);
      absorb(direct, await phase(session.baseURL, count));
      const before = await cpuOf();
      absorb(proxied, await phase(urls, count));
      // Between rounds, with nothing in flight: a full GC then would stall requests and skew the latencies.
      proxyCpuMicros += (await cpuOf()) - before;
      const after = await proxies[0]?.memory();
      if (after) samples.push({ after: (roundIndex + 1) * count, ...after });
    }
    const directP = percentiles(direct.times);
    const proxiedP = percentiles(proxied.times);
    const name = `${setup.processes} process${setup.processes > 1 ? 'es' : ''}, ${setup.store === 'redis' ? 'Redis' : 'memory'} store`;
    const figures = {
      name,
      processes: setup.processes,
      store: setup.store,
      direct: {
        ...directP,
        errors: direct.errors,
        perSecond: round((direct.times.length / direct.wallMs) * 1000),
      },
      proxied: {
        ...proxiedP,
        errors: proxied.errors,
        perSecond: round((proxied.times.length / proxied.wallMs) * 1000),
      },
      added: {
        p50: round(proxiedP.p50 - directP.p50),
        p95: round(proxiedP.p95 - directP.p95),
        p99: round(proxiedP.p99 - directP.p99),
      },
      proxyCpuMsPerRequest: round(proxyCpuMicros / 1000 / proxied.times.length),
    };
    results.push(figures);
    log(`  ${name}:`);
    log(
      `    direct:  p50 ${directP.p50} ms, p95 ${directP.p95} ms, p99 ${directP.p99} ms, ${direct.errors} errors, ${figures.direct.perSecond}/s`,
    );
    log(
      `    proxied: p50 ${proxiedP.p50} ms, p95 ${proxiedP.p95} ms, p99 ${proxiedP.p99} ms, ${proxied.errors} errors, ${figures.proxied.perSecond}/s`,
    );
    log(
      `    added:   p50 ${figures.added.p50} ms, p95 ${figures.added.p95} ms, p99 ${figures.added.p99} ms; proxy CPU ${figures.proxyCpuMsPerRequest} ms per request`,
    );
    if (setup.processes === 1 && setup.store === 'memory') {
      memorySamples = samples;
      // One at a time: what the proxy adds to a request when nothing queues behind another.
      const sequentialDirect = await phase(session.baseURL, SEQUENTIAL, 1);
      const sequentialProxied = await phase(urls, SEQUENTIAL, 1);
      sequential = {
        requests: SEQUENTIAL,
        directP50: round(quantile(sequentialDirect.times, 0.5)),
        proxiedP50: round(quantile(sequentialProxied.times, 0.5)),
        addedP50: round(
          quantile(sequentialProxied.times, 0.5) - quantile(sequentialDirect.times, 0.5),
        ),
        addedP95: round(
          quantile(sequentialProxied.times, 0.95) - quantile(sequentialDirect.times, 0.95),
        ),
        errors: sequentialDirect.errors + sequentialProxied.errors,
      };
      log(`    one at a time: added p50 ${sequential.addedP50} ms, p95 ${sequential.addedP95} ms`);
    }
    await Promise.all(proxies.map((proxy) => proxy.stop()));
    proxies = [];
  }
  const report = {
    at: new Date().toISOString(),
    requests,
    concurrency,
    rounds: ROUNDS,
    replyChunks: 24,
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      node: process.version,
    },
    loadAverage: { start: loadAtStart, end: loadavg() },
    setups: results,
    sequential,
    memory: memorySamples,
  };
  const mb = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1);
  log(`  proxy heapUsed (MB): ${memorySamples.map((sample) => mb(sample.heapUsed)).join(', ')}`);
  log(`  proxy RSS (MB):      ${memorySamples.map((sample) => mb(sample.rss)).join(', ')}`);
  const errors = results.reduce(
    (sum, figures) => sum + figures.direct.errors + figures.proxied.errors,
    sequential.errors ?? 0,
  );
  if (errors > 0) {
    process.exitCode = 1;
    console.error(`Proxy bench: ${errors} requests failed.`);
  } else if (!smoke) {
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/proxy.json', `${JSON.stringify(report, null, 2)}\n`);
    spliceProxySection();
    log('Wrote bench/results/proxy.json and the "Proxy gateway" section of BENCHMARKS.md.');
  }
} finally {
  await Promise.all(proxies.map((proxy) => proxy.stop()));
  await models.close();
  await redis.close();
}
