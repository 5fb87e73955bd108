import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { createProxyHandler, type ProxyOptions, toNodeListener } from '../../src/proxy';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * Origin of Airlock proxies that refuse, each under its own prefix (`/<case>/llm/v1`):
     * `models` allows only `gpt-allowed`; `caller`'s `authorize` answers 401 itself; `key`
     * forwards to an upstream that refuses the server's key; `size` takes bodies up to 2 KiB.
     */
    refusingProxyUrl: string;
  }
}

/** The model the `key` and `size` proxies allow: the one the browser tests' agents ask for. */
const TEST_MODEL = 'airlock-test-model';

/** The refusing proxies of the browser tests, cross-origin to the test page (CORS `*`). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // An upstream that refuses every key, as OpenAI does, quoting a masked key in its message.
  const refusingUpstream = createServer((request, response) => {
    request.resume();
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        error: {
          message: 'Incorrect API key provided: sk-proj-****wxyz.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      }),
    );
  });
  const upstreamUrl = `http://127.0.0.1:${await listen(refusingUpstream)}/v1`;
  const common = {
    apiKey: 'sk-proj-refused-by-the-upstream-wxyz',
    logger: () => {},
    allowedOrigins: '*',
  } satisfies Partial<ProxyOptions>;
  const cases: Record<string, Omit<ProxyOptions, 'apiKey' | 'mountPath'>> = {
    models: {
      upstream: 'http://127.0.0.1:9/v1',
      allowAnonymous: true,
      allowedModels: ['gpt-allowed'],
    },
    caller: {
      upstream: 'http://127.0.0.1:9/v1',
      allowedModels: [TEST_MODEL],
      authorize: () =>
        new Response('Your session has expired: sign in again.', {
          status: 401,
          headers: { 'content-type': 'text/plain' },
        }),
    },
    key: { upstream: upstreamUrl, allowAnonymous: true, allowedModels: [TEST_MODEL] },
    size: {
      upstream: 'http://127.0.0.1:9/v1',
      allowAnonymous: true,
      allowedModels: [TEST_MODEL],
      maxBodyBytes: 2_048,
    },
  };
  const listeners = Object.entries(cases).map(([name, options]) => ({
    prefix: `/${name}/llm/v1/`,
    listener: toNodeListener(
      createProxyHandler({ ...common, ...options, mountPath: `/${name}/llm/v1` }),
    ),
  }));
  const proxies = createServer((request, response) => {
    const found = listeners.find(({ prefix }) => request.url?.startsWith(prefix));
    if (found) return found.listener(request, response);
    response.writeHead(404).end();
  });
  project.provide('refusingProxyUrl', `http://127.0.0.1:${await listen(proxies)}`);
  return async () => {
    await close(proxies);
    await close(refusingUpstream);
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
}
