// The proxy under load, in a process of its own so its memory is measured alone: started
// by bench/proxy.mjs with the upstream's base URL, it serves `createProxyHandler` through
// `toNodeListener` on 127.0.0.1 and answers `memory` messages with the CPU time it has used,
// and its heap and RSS after a full GC (Node runs it with --expose-gc).
import { createServer } from 'node:http';
import { loadSourceModule } from './load-module.mjs';

const [upstream, apiKey] = process.argv.slice(2);
if (!upstream || !apiKey || !process.send) throw new Error('Start me from bench/proxy.mjs.');

const { createProxyHandler, toNodeListener } = await loadSourceModule('/src/proxy.ts');
const handler = createProxyHandler({
  upstream,
  apiKey,
  // The full gateway path: an authorize hook, the policy, per-user counters and a cost budget.
  authorize: (/** @type {Request} */ request) => ({
    userId: request.headers.get('x-user') ?? 'anonymous',
  }),
  allowedModels: ['bench-model'],
  limits: { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000, costPerDay: 1_000_000 },
  prices: { 'bench-model': { promptPerMillion: 0.15, completionPerMillion: 0.6 } },
  logger: (/** @type {string} */ message) => process.stderr.write(`${message}\n`),
});
const server = createServer(toNodeListener(handler));
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
    server.close(() => process.exit(0));
  }
});
process.send({ type: 'listening', port });
