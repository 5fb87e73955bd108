// The MCP OAuth store in Redis, against a real `redis-server` (scripts/redis.mjs) and the OAuth
// MCP server fixture: two proxies sharing one store serve one user, as processes behind a load
// balancer do: the flow starts on one and its callback lands on the other.
import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import { createRedisMcpAuthStore, type McpAuthStore } from '../../../src/proxy';
import { startMcpOAuthServer } from '../../setup/mcp-oauth-server';
import { useRedis } from '../support/redis';
import { sentinelKey, serveProxy } from './support';

const redis = useRedis();

describe('the Redis MCP auth store', () => {
  it('stores, expires and takes values once', async () => {
    const store = createRedisMcpAuthStore({
      client: redis.client,
      prefix: `test:${sentinelKey()}:`,
    });
    await store.set('a', 'one');
    await store.set('b', 'two', 50);
    expect(await store.get('a')).toBe('one');
    const taken = await Promise.all([store.take('a'), store.take('a')]);
    expect(taken.sort()).toEqual(['one', undefined].sort());
    await expect.poll(() => store.get('b'), { timeout: 5_000 }).toBeUndefined();
    await store.delete('missing');
  });

  it('refuses a client without eval', () => {
    let thrown: unknown;
    try {
      createRedisMcpAuthStore({ client: {} as never });
    } catch (error) {
      thrown = error;
    }
    expect(isAirlockError(thrown) && thrown.code).toBe('invalid-options');
  });

  it('lets a flow started on one proxy finish on another, and both then use the grant', async () => {
    const server = await startMcpOAuthServer();
    const store: McpAuthStore = createRedisMcpAuthStore({
      client: redis.client,
      prefix: `test:${sentinelKey()}:`,
    });
    const options = {
      upstream: 'http://127.0.0.1:9/v1',
      apiKey: sentinelKey(),
      authorize: (request: Request) => ({ userId: request.headers.get('x-user') ?? 'nobody' }),
      mcp: {
        notes: {
          url: server.mcpUrl,
          allowedTools: ['whoami'],
          auth: { type: 'oauth' as const, store },
        },
      },
    };
    const first = await serveProxy(options);
    const second = await serveProxy(options);
    try {
      const started = await fetch(`${first.url}/mcp/notes/oauth/start`, {
        method: 'POST',
        headers: { 'x-user': 'alice' },
      });
      const { authorizationUrl } = (await started.json()) as { authorizationUrl: string };
      const consented = await fetch(authorizationUrl, {
        redirect: 'manual',
        headers: { 'x-test-user': 'alice-at-server' },
      });
      // The load balancer sends the callback to the other process.
      const callback = new URL(consented.headers.get('location') ?? '');
      const page = await fetch(`${second.url}${callback.pathname}${callback.search}`, {
        headers: { 'x-user': 'alice' },
      });
      expect(page.status).toBe(200);
      for (const proxy of [first, second]) {
        const answer = await fetch(`${proxy.url}/mcp/notes`, {
          method: 'POST',
          headers: {
            'x-user': 'alice',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'whoami', arguments: {} },
          }),
        });
        expect(
          ((await answer.json()) as { result: { content: { text: string }[] } }).result.content[0]
            ?.text,
        ).toBe('alice-at-server');
      }
    } finally {
      await Promise.all([first.close(), second.close(), server.close()]);
    }
  });
});
