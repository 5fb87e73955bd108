import { createServer, resolveConfig } from 'vite';
import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { airlockProxy } from '../../../src/proxy';

const upstream = 'https://api.openai.com/v1';
const devOptions = { upstream, apiKey: 'sk-test', allowAnonymous: true, logger: () => {} };

describe('airlockProxy in a Vite config', () => {
  it("has Vite pre-bundle the worker and sandbox entries beside the app's own list", async () => {
    const config = await resolveConfig(
      {
        configFile: false,
        logLevel: 'silent',
        plugins: [
          airlockProxy({ upstream, apiKey: 'sk-test', allowAnonymous: true, logger: () => {} }),
        ],
        optimizeDeps: { include: ['zod'] },
      },
      'serve',
    );

    expect(config.optimizeDeps.include).toEqual([
      'zod',
      'airlock-agents/worker',
      'airlock-agents/sandbox',
    ]);
  });

  it("builds the app's workers as ES modules, so what the agent worker loads on use stays in chunks of its own", async () => {
    // Vite's default, iife, cannot split a worker: every `import()` of the agent worker (MCP,
    // knowledge, imports…) was inlined into one file twice the size the README gives.
    const config = await resolveConfig(
      { configFile: false, logLevel: 'silent', plugins: [airlockProxy(devOptions)] },
      'build',
    );

    expect(config.worker.format).toBe('es');
  });

  it('keeps the worker format an app chose itself', async () => {
    const config = await resolveConfig(
      {
        configFile: false,
        logLevel: 'silent',
        plugins: [airlockProxy(devOptions)],
        worker: { format: 'iife' },
      },
      'build',
    );

    expect(config.worker.format).toBe('iife');
  });

  it('lets a build load the config without a key, and refuses to start a dev server without one', async () => {
    // A build (CI, a Dockerfile) has no business holding the key: the proxy is not served there.
    const noKey = () => airlockProxy({ upstream, apiKey: '', allowAnonymous: true });
    await expect(
      resolveConfig({ configFile: false, logLevel: 'silent', plugins: [noKey()] }, 'build'),
    ).resolves.toBeDefined();

    const starting = createServer({
      configFile: false,
      logLevel: 'silent',
      root: new URL('.', import.meta.url).pathname,
      plugins: [noKey()],
      server: { middlewareMode: true, hmr: false, ws: false },
      optimizeDeps: { noDiscovery: true, include: [] },
    });
    const error = await starting.then(
      async (server) => {
        await server.close();
        return undefined;
      },
      (thrown: unknown) => thrown,
    );
    expect(isAirlockError(error) && error.code).toBe('invalid-options');
    expect(String((error as Error).message)).toContain('apiKey');
  });
});
