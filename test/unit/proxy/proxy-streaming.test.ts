import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { createServer as createViteServer } from 'vite';
import { describe, expect, it } from 'vitest';
import { airlockProxy } from '../../../src/proxy';

import {
  chatBody,
  type ProxyServer,
  sentinelKey,
  TEST_MODEL,
  testProxyOptions,
  useProxyFixture,
  waitFor,
} from './support';

const KEY = sentinelKey();
const FORTY_WORDS = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');

const fixture = useProxyFixture(KEY);

function postStream(server: ProxyServer, signal?: AbortSignal): Promise<Response> {
  return fetch(`${server.url}/llm/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(chatBody({ stream: true })),
    ...(signal ? { signal } : {}),
  });
}

describe('streaming through the proxy', () => {
  it('delivers SSE chunks as the upstream writes them, not after it finishes', async () => {
    const session = fixture.models.createSession([{ text: FORTY_WORDS, chunkDelayMs: 25 }]);
    const proxy = await fixture.serveProxy({ upstream: session.baseURL });

    const startedAt = performance.now();
    const response = await postStream(proxy);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body?.getReader();
    if (!reader) throw new Error('The response has no body');
    const decoder = new TextDecoder();
    const arrivals: number[] = [];
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(performance.now() - startedAt);
      text += decoder.decode(value, { stream: true });
    }
    const total = performance.now() - startedAt;

    const firstChunkAt = arrivals[0] ?? Number.POSITIVE_INFINITY;
    // ~40 chunks 25 ms apart: the upstream takes about a second to finish writing.
    expect(total).toBeGreaterThan(800);
    expect(firstChunkAt).toBeLessThan(total * 0.4);
    // Bytes arrive in many reads spread over the stream, not in one burst at the end.
    expect(arrivals.length).toBeGreaterThan(20);
    expect(text.startsWith('data: ')).toBe(true);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('streams a completion end to end for the real openai SDK, and lists models', async () => {
    const session = fixture.models.createSession([{ text: 'The weather in Paris is mild.' }]);
    const proxy = await fixture.serveProxy({
      upstream: session.baseURL,
      paths: ['chat/completions', 'models'],
      // The testing server lists `airlock-test-model`; the list the page gets holds allowed models only.
      allowedModels: ['gpt-allowed', 'airlock-test-model'],
    });
    const client = new OpenAI({ baseURL: `${proxy.url}/llm/v1`, apiKey: 'page-placeholder' });

    const stream = await client.chat.completions.create({
      model: 'gpt-allowed',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      stream: true,
    });
    let answer = '';
    for await (const chunk of stream) answer += chunk.choices[0]?.delta.content ?? '';
    expect(answer).toBe('The weather in Paris is mild.');

    const list = await client.models.list();
    expect(list.data.map((model) => model.id)).toEqual(['airlock-test-model']);

    expect(session.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      `POST ${new URL(session.baseURL).pathname}/chat/completions`,
      `GET ${new URL(session.baseURL).pathname}/models`,
    ]);
    for (const request of session.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(request.headers['x-stainless-lang']).toBe('js');
    }
  });

  it('closes the upstream connection when the client disconnects mid-stream', async () => {
    const session = fixture.models.createSession([{ text: FORTY_WORDS, chunkDelayMs: 50 }]);
    const proxy = await fixture.serveProxy({ upstream: session.baseURL });

    const controller = new AbortController();
    const response = await postStream(proxy, controller.signal);
    const reader = response.body?.getReader();
    if (!reader) throw new Error('The response has no body');
    const first = await reader.read();
    expect(first.done).toBe(false);
    controller.abort();

    await waitFor(() => session.requests[0]?.closedByClient === true);
    expect(session.requests[0]?.closedByClient).toBe(true);
  });

  it('is mounted at its path on the Vite dev server by airlockProxy, leaving other paths to Vite', async () => {
    const session = fixture.models.createSession([{ text: 'Hello from behind Vite.' }]);
    const server = await createViteServer({
      configFile: false,
      logLevel: 'silent',
      root: new URL('.', import.meta.url).pathname,
      plugins: [airlockProxy(testProxyOptions({ upstream: session.baseURL, apiKey: KEY }))],
      server: { host: '127.0.0.1', port: 0, hmr: false, ws: false },
      optimizeDeps: { noDiscovery: true, include: [] },
    });
    try {
      await server.listen();
      const address = server.httpServer?.address() as AddressInfo;
      const url = `http://127.0.0.1:${address.port}`;
      const client = new OpenAI({ baseURL: `${url}/llm/v1`, apiKey: 'page-placeholder' });

      const completion = await client.chat.completions.create({
        model: TEST_MODEL,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(completion.choices[0]?.message.content).toBe('Hello from behind Vite.');
      expect(session.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);

      const forbidden = await fetch(`${url}/llm/v1/files`);
      expect(forbidden.status).toBe(404);
      // Outside the mount path the proxy never sees the request.
      const elsewhere = await fetch(`${url}/support.ts`);
      expect(elsewhere.status).toBe(200);
      expect(session.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe('toNodeListener', () => {
  it('answers a handler error with a 500 when used as a plain request listener', async () => {
    const { toNodeListener } = await import('../../../src/proxy');
    const server = createHttpServer(toNodeListener(() => Promise.reject(new Error('handler bug'))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/anything`);
      expect(response.status).toBe(500);
      expect(await response.text()).not.toContain('handler bug');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
