import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { createModelEndpoint } from '../../../demo/server/model-endpoint';
import {
  createOpenAIChatModel,
  createOpenAIEmbeddingModel,
} from '../../../src/model/openai-chat-model';
import { useModelServer } from '../support/model-server';
import { sentinelKey } from './support';

const models = useModelServer();

describe("the demo's model endpoint with a key", () => {
  it("passes the demo agent's own requests through the gateway, anonymous with a warning at start", async () => {
    const session = models.createSession([{ text: 'Mild and sunny.' }]);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const endpoint = createModelEndpoint({
      OPENAI_API_KEY: sentinelKey(),
      OPENAI_BASE_URL: session.baseURL,
    });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('allowAnonymous'));
    warn.mockRestore();

    const server = createServer((req, res) => {
      // Mounted at /llm/v1 as Connect would: the listener reads the original URL.
      endpoint.listener(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const config = {
        baseURL: `http://127.0.0.1:${port}/llm/v1`,
        model: endpoint.model,
        maxRetries: 0,
      };
      const signal = new AbortController().signal;
      let text = '';
      for await (const part of createOpenAIChatModel(config).stream(
        { messages: [{ role: 'user', content: 'Weather?' }], tools: [] },
        { signal, idleTimeoutMs: 5000 },
      )) {
        if (part.type === 'text-delta') text += part.delta;
      }
      expect(text).toBe('Mild and sunny.');
      const vectors = await createOpenAIEmbeddingModel(config, {
        model: 'text-embedding-3-small',
      }).embed(['a'], {
        signal,
      });
      expect(vectors).toHaveLength(1);
      expect(session.requests[0]?.body).toMatchObject({ max_completion_tokens: 2048 });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      endpoint.close();
    }
  });
});
