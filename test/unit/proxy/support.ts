import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxyHandler, type ProxyOptions, toNodeListener } from '../../../src/proxy';
import type { RecordedRequest } from '../../../src/testing';

/** A proxy served over real HTTP on a free local port. */
export interface ProxyServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  close(): Promise<void>;
}

/** A key no test ever sends from the client side, so finding it anywhere else is a leak. */
export function sentinelKey(): string {
  return `sk-airlock-sentinel-${randomBytes(12).toString('hex')}`;
}

/** The model every test body asks for, allowed by {@link testProxyOptions}. */
export const TEST_MODEL = 'gpt-allowed';

/**
 * The options tests start from: anonymous (tests about `authorize` pass their own), silent,
 * and allowing {@link TEST_MODEL}, which the default model list does not hold.
 */
export function testProxyOptions(
  options: Partial<ProxyOptions> & Pick<ProxyOptions, 'upstream' | 'apiKey'>,
): ProxyOptions {
  return {
    ...(options.authorize ? {} : { allowAnonymous: true }),
    logger: () => {},
    allowedModels: [TEST_MODEL],
    ...options,
  };
}

/** Serves `createProxyHandler(testProxyOptions(options))` with `http.createServer` on 127.0.0.1. */
export async function serveProxy(
  options: Partial<ProxyOptions> & Pick<ProxyOptions, 'upstream' | 'apiKey'>,
): Promise<ProxyServer> {
  const server = createServer(toNodeListener(createProxyHandler(testProxyOptions(options))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** A port nothing listens on: bound once, then released. */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A Chat Completions body as the agent worker sends it. */
export function chatBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: TEST_MODEL,
    messages: [{ role: 'user', content: 'Hello?' }],
    ...extra,
  };
}

/** The recorded request's JSON body as an object. */
export function bodyOf(request: RecordedRequest | undefined): Record<string, unknown> {
  const body = request?.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Error(`Expected a recorded JSON object body, got ${JSON.stringify(body)}`);
  }
  return body as Record<string, unknown>;
}

/** Polls `condition` every 10 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
