import { resolveConfig } from 'vite';
import { describe, expect, it } from 'vitest';
import { airlockProxy } from '../../../src/proxy';

describe('airlockProxy in a Vite config', () => {
  it("has Vite pre-bundle the worker and sandbox entries beside the app's own list", async () => {
    const config = await resolveConfig(
      {
        configFile: false,
        logLevel: 'silent',
        plugins: [
          airlockProxy({
            upstream: 'https://api.openai.com/v1',
            apiKey: 'sk-test',
            allowAnonymous: true,
            logger: () => {},
          }),
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
});
