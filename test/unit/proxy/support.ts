import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  createNodeHandler,
  createProxyHandler,
  type ProxyOptions,
  toNodeListener,
} from '../../../src/proxy';
import { type ModelServer, type RecordedRequest, startModelServer } from '../../../src/testing';

/** A proxy served over real HTTP on a free local port. */
export interface ProxyServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** Stops the server; a second call returns the first one's promise. */
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

/**
 * Which shell the proxy tests serve through: the Node shell (`createNodeHandler`) unless
 * `AIRLOCK_PROXY_SHELL=fetch` (the `unit-fetch-shell` project) asks for the Fetch-API one
 * under `toNodeListener`, so every proxy test holds for both.
 */
export const PROXY_SHELL = process.env.AIRLOCK_PROXY_SHELL === 'fetch' ? 'fetch' : 'node';

/** Serves the proxy of `testProxyOptions(options)` with `http.createServer` on 127.0.0.1. */
export async function serveProxy(
  options: Partial<ProxyOptions> & Pick<ProxyOptions, 'upstream' | 'apiKey'>,
): Promise<ProxyServer> {
  const proxyOptions = testProxyOptions(options);
  const server = createServer(
    PROXY_SHELL === 'fetch'
      ? toNodeListener(createProxyHandler(proxyOptions))
      : createNodeHandler(proxyOptions),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    // Idempotent: a test may close a proxy itself before its fixture does.
    close: () =>
      (closed ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      })),
  };
}

/**
 * What a proxy test file runs against: one testing model server for the file, and proxies
 * started through `serveProxy` (the `apiKey` is `key`), each closed when its test ends.
 */
export function useProxyFixture(key: string) {
  let models: ModelServer | undefined;
  const started: ProxyServer[] = [];
  beforeAll(async () => {
    models = await startModelServer();
  });
  afterAll(() => models?.close());
  afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.close()));
  });
  return {
    /** The file's model server, once `beforeAll` has run. */
    get models(): ModelServer {
      if (!models) throw new Error('The model server starts in beforeAll.');
      return models;
    },
    async serveProxy(
      options: Partial<ProxyOptions> & Pick<ProxyOptions, 'upstream'>,
    ): Promise<ProxyServer> {
      const server = await serveProxy({ apiKey: key, ...options });
      started.push(server);
      return server;
    },
    /** A proxy in front of `session`. */
    proxyTo(session: { readonly baseURL: string }, options: Partial<ProxyOptions> = {}) {
      return this.serveProxy({ upstream: session.baseURL, ...options });
    },
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

/** POSTs `body` to the proxy's chat completions: as JSON, or a string as it is (a malformed body). */
export function postChat(
  server: ProxyServer,
  body: unknown = chatBody(),
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}/llm/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
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
