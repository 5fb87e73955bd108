// `npm run bench:proxy`: a load test of the proxy's Node adapter on 127.0.0.1. The same
// streamed chat completions go to the testing model server directly and through the proxy
// (a process of its own: authorize, request policy, per-user counters, key redaction, the
// event-by-event relay), at the same concurrency; the difference is what the proxy adds.
// Writes bench/results/proxy.json and the "Proxy gateway" section of BENCHMARKS.md.
//
//   npm run bench:proxy                       2 000 requests each way, 50 at once
//   node bench/proxy.mjs --requests=500 --concurrency=20
//   node bench/proxy.mjs --smoke              100 requests, 10 at once, no files written;
//                                             fails on any error (part of bench:smoke)
//
// Not a test: nothing fails on a latency figure, only on errors.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
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
const requests = option('requests', smoke ? 100 : 2000);
const concurrency = option('concurrency', smoke ? 10 : 50);
const warmup = Math.min(200, requests);
/** Rounds of direct-then-proxied requests. */
const ROUNDS = 4;
/** Requests sent one at a time each way, after the rounds. */
const SEQUENTIAL = smoke ? 20 : 200;
const USERS = 50;
/** A reply of 24 words: a role chunk, 24 content chunks, a finish and a usage chunk, [DONE]. */
const REPLY = Array.from({ length: 24 }, (_, index) => `word${index}`).join(' ');

const loadAtStart = loadavg();
const { startModelServer } = await loadSourceModule('/src/testing.ts');
const models = await startModelServer();
const session = models.createSession(() => ({ text: REPLY }));
const apiKey = `sk-bench-${randomBytes(16).toString('hex')}`;

const child = fork(
  fileURLToPath(new URL('./proxy/proxy-process.mjs', import.meta.url)),
  [session.baseURL, apiKey],
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
const proxyURL = `http://127.0.0.1:${port}/llm/v1`;
const memory = async () => {
  const reply = nextMessage('memory');
  child.send({ type: 'memory' });
  const { heapUsed, rss, cpuMicros } =
    /** @type {{ heapUsed: number; rss: number; cpuMicros: number }} */ (await reply);
  return { heapUsed, rss, cpuMicros };
};

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
 * `count` requests to `base`, `lanes` at a time, over keep-alive connections.
 * @param {string} base @param {number} count @param {number} [lanes]
 */
async function phase(base, count, lanes = concurrency) {
  const agent = new Agent({ keepAlive: true, maxSockets: lanes });
  /** @type {number[]} */
  const times = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < count) {
      const index = next++;
      const result = await streamOnce(agent, base, index);
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

try {
  log(
    `Proxy bench: ${requests} streamed requests each way, ${concurrency} at once${smoke ? ' (smoke)' : ''}…`,
  );
  await phase(session.baseURL, warmup);
  await phase(proxyURL, warmup);
  // Alternating rounds, so a change in the machine's load (it is shared) falls on both sides.
  const memoryStart = await memory();
  /** @type {{ after: number; heapUsed: number; rss: number; cpuMicros: number }[]} */
  const samples = [{ after: 0, ...memoryStart }];
  let proxyCpuMicros = 0;
  const direct = { times: /** @type {number[]} */ ([]), errors: 0, wallMs: 0 };
  const proxied = { times: /** @type {number[]} */ ([]), errors: 0, wallMs: 0 };
  for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
    const count = Math.ceil(requests / ROUNDS);
    absorb(direct, await phase(session.baseURL, count));
    const before = await memory();
    absorb(proxied, await phase(proxyURL, count));
    // Between rounds, with nothing in flight: a full GC then would stall requests and skew the latencies.
    const after = await memory();
    proxyCpuMicros += after.cpuMicros - before.cpuMicros;
    samples.push({ after: (roundIndex + 1) * count, ...after });
  }
  // One at a time: what the proxy adds to a request when nothing queues behind another.
  const sequentialDirect = await phase(session.baseURL, SEQUENTIAL, 1);
  const sequentialProxied = await phase(proxyURL, SEQUENTIAL, 1);
  const figures = {
    at: new Date().toISOString(),
    requests: direct.times.length,
    concurrency,
    rounds: ROUNDS,
    replyChunks: 24,
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      node: process.version,
    },
    loadAverage: { start: loadAtStart, end: loadavg() },
    direct: {
      p50: round(quantile(direct.times, 0.5)),
      p95: round(quantile(direct.times, 0.95)),
      errors: direct.errors,
      perSecond: round((direct.times.length / direct.wallMs) * 1000),
    },
    proxied: {
      p50: round(quantile(proxied.times, 0.5)),
      p95: round(quantile(proxied.times, 0.95)),
      errors: proxied.errors,
      perSecond: round((proxied.times.length / proxied.wallMs) * 1000),
    },
    added: {
      p50: round(quantile(proxied.times, 0.5) - quantile(direct.times, 0.5)),
      p95: round(quantile(proxied.times, 0.95) - quantile(direct.times, 0.95)),
    },
    sequential: {
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
    },
    proxyCpuMsPerRequest: round(proxyCpuMicros / 1000 / proxied.times.length),
    memory: samples,
  };
  const mb = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1);
  log(
    `  direct:  p50 ${figures.direct.p50} ms, p95 ${figures.direct.p95} ms, ${figures.direct.errors} errors, ${figures.direct.perSecond}/s`,
  );
  log(
    `  proxied: p50 ${figures.proxied.p50} ms, p95 ${figures.proxied.p95} ms, ${figures.proxied.errors} errors, ${figures.proxied.perSecond}/s`,
  );
  log(`  added:   p50 ${figures.added.p50} ms, p95 ${figures.added.p95} ms`);
  log(
    `  one at a time: added p50 ${figures.sequential.addedP50} ms, p95 ${figures.sequential.addedP95} ms; proxy CPU ${figures.proxyCpuMsPerRequest} ms per request`,
  );
  log(`  proxy heapUsed (MB): ${samples.map((sample) => mb(sample.heapUsed)).join(', ')}`);
  log(`  proxy RSS (MB):      ${samples.map((sample) => mb(sample.rss)).join(', ')}`);
  if (direct.errors + proxied.errors > 0) {
    process.exitCode = 1;
    console.error(
      `Proxy bench: ${direct.errors} direct and ${proxied.errors} proxied requests failed.`,
    );
  } else if (!smoke) {
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/proxy.json', `${JSON.stringify(figures, null, 2)}\n`);
    spliceProxySection();
    log('Wrote bench/results/proxy.json and the "Proxy gateway" section of BENCHMARKS.md.');
  }
} finally {
  child.send({ type: 'stop' });
  await models.close();
}
