/**
 * An {@link McpAuthStore} in Redis, so several proxy processes share the users' MCP tokens
 * and pending authorizations. Like the Redis counter store, it takes the app's own node-redis
 * client and calls only `eval`; `take` is one script, so a `state` is used once across
 * processes.
 */
import { AirlockError } from '../errors/airlock-error.js';
import { waitFor } from '../timing/wait.js';
import type { McpAuthStore } from './mcp-auth-store.js';

/** The call of a node-redis (v5 or v6) client this store uses. */
export interface RedisEvalClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Options of {@link createRedisMcpAuthStore}. */
export interface RedisMcpAuthStoreOptions {
  /** A connected node-redis client (`disableOfflineQueue: true`, so calls fail at once while Redis is down). */
  readonly client: RedisEvalClient;
  /** Prefix of every key. Default `airlock:mcp-auth:`. */
  readonly prefix?: string;
  /** How long one call may take before it fails, in ms. Default 1000. */
  readonly timeoutMs?: number;
}

const SET_SCRIPT = `
if ARGV[2] == '' then return redis.call('SET', KEYS[1], ARGV[1]) end
return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])`;
const GET_SCRIPT = `return redis.call('GET', KEYS[1])`;
// GET then DEL in one script: GETDEL needs Redis 6.2, this any version with scripting.
const TAKE_SCRIPT = `
local value = redis.call('GET', KEYS[1])
if value then redis.call('DEL', KEYS[1]) end
return value`;
const DELETE_SCRIPT = `return redis.call('DEL', KEYS[1])`;

/** Creates the store; throws `invalid-options` without a client that has `eval`. */
export function createRedisMcpAuthStore(options: RedisMcpAuthStoreOptions): McpAuthStore {
  const { client } = options;
  if (typeof client?.eval !== 'function') {
    throw new AirlockError(
      'invalid-options',
      '`client` must be a node-redis client (with `eval`).',
    );
  }
  const prefix = options.prefix ?? 'airlock:mcp-auth:';
  const timeoutMs = options.timeoutMs ?? 1000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new AirlockError('invalid-options', '`timeoutMs` must be a number above 0.');
  }
  const run = async (script: string, key: string, args: string[]): Promise<unknown> => {
    const waited = await waitFor(client.eval(script, { keys: [prefix + key], arguments: args }), {
      timeoutMs,
    });
    if (waited.outcome !== 'settled') {
      throw new Error(`Redis did not answer within ${timeoutMs} ms.`);
    }
    return waited.value;
  };
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' ? value : undefined;
  return {
    async set(key, value, ttlMs) {
      await run(SET_SCRIPT, key, [value, ttlMs === undefined ? '' : String(Math.ceil(ttlMs))]);
    },
    async get(key) {
      return text(await run(GET_SCRIPT, key, []));
    },
    async take(key) {
      return text(await run(TAKE_SCRIPT, key, []));
    },
    async delete(key) {
      await run(DELETE_SCRIPT, key, []);
    },
  };
}
