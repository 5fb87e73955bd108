// The proxy bench's floor: a bare pass-through relay on `node:http`, with no checks, no
// counting and no redaction; request and answer bytes go through as they come. Whatever
// it adds over direct is the cost of any proxy on this machine (one more process, two more
// sockets, two more wake-ups per event); what the proxy adds over it is Airlock's own.
// Started by bench/proxy.mjs with the upstream's base URL; answers `memory` (its CPU time
// so far) and `stop` as proxy-process.mjs does.
import { Agent, createServer, request } from 'node:http';

const [upstream] = process.argv.slice(2);
if (!upstream || !process.send) throw new Error('Start me from bench/proxy.mjs.');
const target = new URL(upstream);
const basePath = target.pathname.replace(/\/$/, '');
const agent = new Agent({ keepAlive: true });

const server = createServer((incoming, outgoing) => {
  const path = `${basePath}${(incoming.url ?? '/').replace(/^\/llm\/v1/, '')}`;
  const headers = { ...incoming.headers, host: target.host };
  const upstreamRequest = request(
    { host: target.hostname, port: target.port, path, method: incoming.method, headers, agent },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      // As the proxy's adapter does: small events are not held back by Nagle's algorithm.
      outgoing.socket?.setNoDelay(true);
      outgoing.flushHeaders();
      answer.pipe(outgoing);
    },
  );
  upstreamRequest.on('error', () => outgoing.destroy());
  incoming.pipe(upstreamRequest);
});
server.keepAliveTimeout = 30_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : 0;

process.on('message', (/** @type {{ type: string }} */ message) => {
  if (message.type === 'memory') {
    const { user, system } = process.cpuUsage();
    const { heapUsed, rss } = process.memoryUsage();
    process.send?.({ type: 'memory', heapUsed, rss, cpuMicros: user + system });
  } else if (message.type === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
process.send({ type: 'listening', port });
