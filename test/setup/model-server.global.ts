import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { createProxyHandler, toNodeListener } from '../../src/proxy';
import { startModelServer } from '../../src/testing';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the scripted model server; tests open sessions on it. */
    modelServerUrl: string;
    /** Runs of the fault soak: 50 in `npm test`, `AIRLOCK_SOAK_RUNS` (1 000 in `npm run soak`). */
    soakRuns: number;
    /** The soak's first seed; run `i` uses `seed + i`. */
    soakSeed: number;
    /**
     * Origin of an Airlock proxy with its default settings (only `upstream`, `apiKey`,
     * `allowAnonymous` and `allowedOrigins` given) in front of one model session each:
     * `${defaultProxyUrl}/${base64url(session.baseURL)}/llm/v1` is the `baseURL`.
     */
    defaultProxyUrl: string;
  }
}

/** One scripted model server for the whole run; each test opens its own session on it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startModelServer();
  project.provide('modelServerUrl', server.url);
  project.provide('soakRuns', Number(process.env.AIRLOCK_SOAK_RUNS ?? 50));
  project.provide('soakSeed', Number(process.env.AIRLOCK_SOAK_SEED ?? 20_261_130));
  const proxy = await startDefaultProxy(server.url);
  project.provide('defaultProxyUrl', proxy.url);
  return async () => {
    await proxy.close();
    await server.close();
  };
}

/**
 * A proxy server holding one default proxy handler per model session, made on its first
 * request: the first path segment names the session's base URL in base64url (on `modelServerUrl` only).
 */
async function startDefaultProxy(
  modelServerUrl: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const handlers = new Map<string, ReturnType<typeof toNodeListener>>();
  const proxy = createServer((request, response) => {
    const segment = (request.url ?? '/').split('/')[1] ?? '';
    const upstream = Buffer.from(segment, 'base64url').toString();
    if (!upstream.startsWith(`${modelServerUrl}/`)) {
      response.writeHead(404).end();
      return;
    }
    let handler = handlers.get(segment);
    if (!handler) {
      handler = toNodeListener(
        createProxyHandler({
          upstream,
          apiKey: 'sk-test-default-proxy',
          allowAnonymous: true,
          allowedOrigins: '*',
          logger: () => {},
          mountPath: `/${segment}/llm/v1`,
        }),
      );
      handlers.set(segment, handler);
    }
    handler(request, response);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
