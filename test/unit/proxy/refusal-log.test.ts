// @vitest-environment node
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, createServer } from 'vite';
import { describe, expect, it, onTestFinished } from 'vitest';
import { airlockProxy, formatRefusal } from '../../../src/proxy';
import { sentinelKey, unusedPort } from './support';

describe('a refusal as one log line', () => {
  it('says who, the route, the status, the code and the message', () => {
    expect(
      formatRefusal({
        code: 'model_not_allowed',
        status: 403,
        method: 'POST',
        path: '/llm/v1/chat/completions',
        userId: 'alice',
        origin: 'https://app.example.com',
        message: 'The model "gpt-x" is not allowed through this proxy.',
      }),
    ).toBe(
      'Airlock proxy refused POST /llm/v1/chat/completions (user alice, origin https://app.example.com): 403 model_not_allowed, The model "gpt-x" is not allowed through this proxy.',
    );
    expect(
      formatRefusal({
        code: 'upstream_unreachable',
        status: 502,
        method: 'POST',
        path: '/llm/v1/chat/completions',
        message: 'The model proxy could not reach its upstream (ECONNREFUSED).',
      }),
    ).toBe(
      'Airlock proxy failed POST /llm/v1/chat/completions: 502 upstream_unreachable, The model proxy could not reach its upstream (ECONNREFUSED).',
    );
  });

  it('stays one line whatever a caller put in the model name, the user id or the path, and cuts a long message', () => {
    const line = formatRefusal({
      code: 'model_not_allowed',
      status: 403,
      method: 'POST',
      path: '/llm/v1/chat/completions\r\nAirlock proxy: all is well',
      userId: 'mallory\u001b[2J',
      message: `The model "x\n\u001b[31mforged\u2028line${'y'.repeat(10_000)}" is not allowed through this proxy.`,
    });

    const controls = [...line].filter((char) => {
      const code = char.charCodeAt(0);
      return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
    });
    expect(controls).toEqual([]);
    expect(line).toContain('\\u000d\\u000aAirlock proxy: all is well');
    expect(line).toContain('mallory\\u001b[2J');
    expect(line.length).toBeLessThan(600);
    expect(line.endsWith('…')).toBe(true);
  });
});

describe("the Vite plugin's terminal", () => {
  it("logs each refusal as one warning in Vite's logger, and says when the upstream cannot be reached, never the key", async () => {
    const key = sentinelKey();
    const warnings: string[] = [];
    const logger = createLogger('silent');
    // Vite warns of its own matters too (a first run's dependency cache): the proxy's lines are read.
    logger.warn = (message) => {
      if (message.startsWith('Airlock proxy')) warnings.push(message);
    };
    const vite = await createServer({
      configFile: false,
      customLogger: logger,
      root: new URL('.', import.meta.url).pathname,
      plugins: [
        airlockProxy({
          upstream: `http://127.0.0.1:${await unusedPort()}/v1`,
          apiKey: key,
          allowAnonymous: true,
          allowedModels: ['gpt-allowed'],
          logger: () => {},
        }),
      ],
      server: { middlewareMode: true, hmr: false, ws: false },
      optimizeDeps: { noDiscovery: true, include: [] },
    });
    const http = createHttpServer(vite.middlewares);
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    onTestFinished(async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await vite.close();
    });
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/llm/v1/chat/completions`;
    const post = (model: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
      });

    const refused = await post('gpt-elsewhere');
    const unreachable = await post('gpt-allowed');

    expect(refused.status).toBe(403);
    expect(unreachable.status).toBe(502);
    expect(warnings).toEqual([
      'Airlock proxy refused POST /llm/v1/chat/completions (user anonymous): 403 model_not_allowed, The model "gpt-elsewhere" is not allowed through this proxy.',
      'Airlock proxy failed POST /llm/v1/chat/completions (user anonymous): 502 upstream_unreachable, The model proxy could not reach its upstream (ECONNREFUSED).',
    ]);
    expect(warnings.join('\n')).not.toContain(key);
  });
});
