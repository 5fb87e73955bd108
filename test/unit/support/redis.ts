// The Redis a proxy test file runs against: a throwaway `redis-server` (scripts/redis.mjs,
// which installs Debian's when missing) on 127.0.0.1 on a free port, and one node-redis client
// to it, both started before the file's tests and ended after them.
import { createClient } from 'redis';
import { afterAll, beforeAll } from 'vitest';
import { type RedisServer, startRedis } from '../../../scripts/redis.mjs';

/** A node-redis client, as `createRedisCounterStore` and `createRedisMcpAuthStore` take it. */
export type RedisClient = ReturnType<typeof createClient>;

/** What {@link useRedis} gives a test file. */
export interface RedisFixture {
  /** The server: `url`, and `stop()`/`start()` for an outage. */
  readonly server: RedisServer;
  /** Connected, with no offline queue: a call while the server is down rejects at once. */
  readonly client: RedisClient;
}

/**
 * Starts the file's Redis server and client in `beforeAll` and ends both in `afterAll`; the
 * fields are there once `beforeAll` has run.
 */
export function useRedis(): RedisFixture {
  let server: RedisServer | undefined;
  let client: RedisClient | undefined;
  beforeAll(async () => {
    server = await startRedis();
    client = createClient({ url: server.url, disableOfflineQueue: true });
    // node-redis reports a lost connection as an event too; the calls' rejections are what count.
    client.on('error', () => undefined);
    await client.connect();
  }, 30_000);
  afterAll(async () => {
    client?.destroy();
    await server?.close();
  });
  return {
    get server(): RedisServer {
      if (!server) throw new Error('The Redis server starts in beforeAll.');
      return server;
    },
    get client(): RedisClient {
      if (!client) throw new Error('The Redis client connects in beforeAll.');
      return client;
    },
  };
}
