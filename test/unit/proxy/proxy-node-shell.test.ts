import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeHandler, type ProxyOptions } from '../../../src/proxy';
import { chatBody, sentinelKey, testProxyOptions } from './support';

// What only the Node shell (`createNodeHandler`) does itself: its own upstream client and
// its own relay. Everything else it shares with the Fetch-API shell, and the rest of
// test/unit/proxy holds both to it (PROXY_SHELL in support.ts).

const KEY = sentinelKey();
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An upstream answering every request with `answer`, recording what it was sent. */
async function upstreamOf(
  answer: (req: IncomingMessage, res: import('node:http').ServerResponse) => void,
): Promise<{ url: string; seen: { headers: IncomingMessage['headers'] }[] }> {
  const seen: { headers: IncomingMessage['headers'] }[] = [];
  const url = await listen(
    createServer((req, res) => {
      seen.push({ headers: req.headers });
      req.resume();
      req.on('end', () => answer(req, res));
    }),
  );
  return { url, seen };
}

async function nodeProxy(options: Partial<ProxyOptions> & { upstream: string }): Promise<string> {
  return listen(createServer(createNodeHandler(testProxyOptions({ apiKey: KEY, ...options }))));
}

/** A POST over node:http (no Fetch API on the client side either); the status, headers and text. */
function post(
  url: string,
  body: unknown,
): Promise<{ status: number; headers: IncomingMessage['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${url}/llm/v1/chat/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify(body));
  });
}

const streamedAnswer = (content: string): string =>
  [
    `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}`,
    `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } })}`,
    'data: [DONE]',
    '',
  ].join('\n\n');

describe('the Node shell', () => {
  it('relays a stream without making a Request, Response, ReadableStream or AbortController', async () => {
    const upstream = await upstreamOf((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(streamedAnswer('Hello'));
    });
    const proxy = await nodeProxy({ upstream: upstream.url });
    const made: string[] = [];
    const originals = {
      Request: globalThis.Request,
      Response: globalThis.Response,
      ReadableStream: globalThis.ReadableStream,
      AbortController: globalThis.AbortController,
    };
    for (const [name, Original] of Object.entries(originals)) {
      // A subclass that notes each construction: the proxy runs in this process.
      const Counted = class extends (Original as new (...args: unknown[]) => object) {
        constructor(...args: unknown[]) {
          super(...args);
          made.push(name);
        }
      };
      Object.defineProperty(globalThis, name, {
        value: Counted,
        configurable: true,
        writable: true,
      });
    }
    let answer: Awaited<ReturnType<typeof post>>;
    try {
      answer = await post(proxy, chatBody({ stream: true }));
    } finally {
      for (const [name, Original] of Object.entries(originals)) {
        Object.defineProperty(globalThis, name, {
          value: Original,
          configurable: true,
          writable: true,
        });
      }
    }
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('"content":"Hello"');
    expect(answer.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(made).toEqual([]);
    // Node's own client asks for no compression: the proxy reads the text it relays.
    expect(upstream.seen[0]?.headers['accept-encoding']).toBe('identity');
    expect(upstream.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('does not follow an upstream redirect: a 502, and the key never reaches its target', async () => {
    const target = await upstreamOf((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const upstream = await upstreamOf((_req, res) => {
      res.writeHead(307, { location: `${target.url}/chat/completions` });
      res.end();
    });
    const answer = await post(await nodeProxy({ upstream: upstream.url }), chatBody());
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.text).error.code).toBe('upstream_unreachable');
    expect(target.seen).toEqual([]);
  });

  it('reads a gzip answer it did not ask for, redacting the key hidden in the compressed bytes', async () => {
    const upstream = await upstreamOf((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      res.end(gzipSync(streamedAnswer(`your key is ${KEY}`)));
    });
    const answer = await post(
      await nodeProxy({ upstream: upstream.url }),
      chatBody({ stream: true }),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.text).toContain('your key is [redacted]');
    expect(answer.text).not.toContain(KEY);
    expect(answer.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('refuses an answer in an encoding it cannot read with a 502 rather than relaying its bytes', async () => {
    const upstream = await upstreamOf((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' });
      res.end(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00]));
    });
    const answer = await post(await nodeProxy({ upstream: upstream.url }), chatBody());
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.text).error.code).toBe('upstream_unreachable');
  });

  it('sends once more on a new socket when the upstream resets a kept-alive one as it is reused, and only then', async () => {
    const used = new WeakSet<object>();
    let arrivals = 0;
    let resetFresh = false;
    const url = await listen(
      createServer((req, res) => {
        arrivals++;
        const reused = used.has(req.socket);
        used.add(req.socket);
        // As an upstream does that closes an idle connection just as the proxy sends on it.
        if (reused || resetFresh) {
          req.socket.resetAndDestroy();
          return;
        }
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }),
          );
        });
      }),
    );
    const proxy = await nodeProxy({ upstream: url });
    expect((await post(proxy, chatBody())).status).toBe(200);
    expect((await post(proxy, chatBody())).status).toBe(200);
    // The second request: reset on the kept-alive socket, then sent again on a fresh one.
    expect(arrivals).toBe(3);

    // A fresh socket reset is a failure of the upstream: a 502, not a retry.
    resetFresh = true;
    const failed = await post(await nodeProxy({ upstream: url }), chatBody());
    expect(failed.status).toBe(502);
    expect(JSON.parse(failed.text).error.code).toBe('upstream_unreachable');
    expect(arrivals).toBe(4);
  });

  it('cuts the connection when an upstream event passes 4 Mi characters, rather than end cleanly', async () => {
    const upstream = await upstreamOf((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${'x'.repeat(5 * 1024 * 1024)}`);
      // Never ends: only the proxy's cap can end this stream.
    });
    const proxy = await nodeProxy({ upstream: upstream.url });
    await expect(post(proxy, chatBody({ stream: true }))).rejects.toThrow(
      /aborted|socket hang up|ECONNRESET/,
    );
  });
});
