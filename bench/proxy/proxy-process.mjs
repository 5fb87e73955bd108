// The proxy in a process of its own: started by bench/proxy.mjs (its memory is measured
// alone) and by the multi-process test (test/unit/proxy/proxy-redis.test.ts) with the
// upstream's base URL, the key and, as JSON, `{ redisUrl?, redisTimeoutMs?, limits?, model?, maxTokens?, fixedNow? }` (`fixedNow`:
// a clock that stands still, so a test's burst never straddles a minute; `shell: 'fetch'`:
// the Fetch-API shell under `toNodeListener` instead of the Node shell; `root`: the proxy of
// another checkout, e.g. the main branch's worktree, for a before/after in one run).
// It serves `createNodeHandler` (the Node shell) on 127.0.0.1, counting in Redis
// when given `redisUrl`, and answers `memory` messages with the CPU time it has used, and
// its heap and RSS after a full GC (Node runs it with --expose-gc).
import { createServer } from 'node:http';
import { createClient } from 'redis';
import { loadSourceModule } from './load-module.mjs';

const [upstream, apiKey, settingsJson] = process.argv.slice(2);
if (!upstream || !apiKey || !process.send) throw new Error('Start me from bench/proxy.mjs.');
/** @type {{ redisUrl?: string; redisTimeoutMs?: number; fixedNow?: number; limits?: Record<string, number>; model?: string; maxTokens?: number; shell?: 'node' | 'fetch'; root?: string }} */
const settings = JSON.parse(settingsJson ?? '{}');
const model = settings.model ?? 'bench-model';

const { createNodeHandler, createProxyHandler, createRedisCounterStore, toNodeListener } =
  await loadSourceModule('/src/proxy.ts', settings.root);
/** @type {ReturnType<typeof createClient> | undefined} */
let redis;
if (settings.redisUrl) {
  // No offline queue: while Redis is down a call fails at once, and the proxy answers 503.
  redis = createClient({ url: settings.redisUrl, disableOfflineQueue: true });
  redis.on('error', () => {});
  await redis.connect();
}
const options = {
  upstream,
  apiKey,
  // The full gateway path: an authorize hook, the policy, per-user counters and a cost budget.
  authorize: (/** @type {Request} */ request) => ({
    userId: request.headers.get('x-user') ?? 'anonymous',
  }),
  allowedModels: [model],
  limits: settings.limits ?? {
    requestsPerMinute: 1_000_000,
    tokensPerMinute: 1_000_000_000,
    costPerDay: 1_000_000,
  },
  prices: { [model]: { promptPerMillion: 0.15, completionPerMillion: 0.6 } },
  ...(settings.maxTokens === undefined ? {} : { maxTokens: settings.maxTokens }),
  ...(settings.fixedNow === undefined ? {} : { now: () => settings.fixedNow ?? 0 }),
  ...(redis === undefined
    ? {}
    : {
        counterStore: createRedisCounterStore({
          client: redis,
          ...(settings.redisTimeoutMs === undefined ? {} : { timeoutMs: settings.redisTimeoutMs }),
        }),
      }),
  logger: (/** @type {string} */ message) => process.stderr.write(`${message}\n`),
};
// A checkout from before the Node shell has only the Fetch-API one.
const server = createServer(
  settings.shell === 'fetch' || createNodeHandler === undefined
    ? toNodeListener(createProxyHandler(options))
    : createNodeHandler(options),
);
server.keepAliveTimeout = 30_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : 0;

process.on('message', (/** @type {{ type: string }} */ message) => {
  if (message.type === 'memory') {
    // CPU first, so the GC below is not charged to the requests.
    const { user, system } = process.cpuUsage();
    globalThis.gc?.();
    const { heapUsed, rss } = process.memoryUsage();
    process.send?.({ type: 'memory', heapUsed, rss, cpuMicros: user + system });
  } else if (message.type === 'stop') {
    server.closeAllConnections();
    redis?.destroy();
    server.close(() => process.exit(0));
  }
});
process.send({ type: 'listening', port });
