/**
 * A {@link CounterStore} in Redis, so any number of proxy processes hold one set of limits.
 * Reserve and settle are one Lua script each, run atomically by the server: the check of
 * every limit and the adds cannot interleave with another process's. The client is the
 * app's own `redis` (node-redis) client, an optional peer dependency: this module imports
 * nothing of it, only calls `evalSha` / `eval`.
 */
import { AirlockError } from '../errors/airlock-error.js';
import { waitFor } from '../timing/wait.js';
import {
  type CounterClaim,
  type CounterReservation,
  type CounterStore,
  claimWindows,
  type ReserveOutcome,
} from './counter-store.js';

/** The calls of a node-redis (v5 or v6) client this store uses. */
export interface RedisScriptClient {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Options of {@link createRedisCounterStore}. */
export interface RedisCounterStoreOptions {
  /** A connected node-redis client. Create it with `disableOfflineQueue: true`, so calls fail at once while Redis is down. */
  readonly client: RedisScriptClient;
  /**
   * How long one call may take before it fails, in ms (the request is then refused with
   * 503 `limits_unavailable`). Default 1000: a client that queues commands while Redis is
   * down would otherwise hold every request.
   */
  readonly timeoutMs?: number;
}

/**
 * KEYS: per window claim its current and previous counters, then the in-flight set.
 * ARGV: claim count, has-in-flight, per claim (amount, limit, previous weight, ttl ms),
 * then (id, limit, expires at, now) of the in-flight claim.
 * Every limit is checked before anything is added: all or nothing.
 */
const RESERVE_SCRIPT = `
local n = tonumber(ARGV[1])
local flight = ARGV[2] == '1'
for i = 1, n do
  local at = 3 + (i - 1) * 4
  local limit = tonumber(ARGV[at + 1])
  local weight = tonumber(ARGV[at + 2])
  local current = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
  local previous = 0
  if weight > 0 then previous = tonumber(redis.call('GET', KEYS[2 * i]) or '0') end
  if current + previous * weight >= limit then
    return { 'refused', tostring(i - 1), tostring(current), tostring(previous) }
  end
end
if flight then
  local key = KEYS[2 * n + 1]
  local at = 3 + n * 4
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[at + 3])
  if redis.call('ZCARD', key) >= tonumber(ARGV[at + 1]) then return { 'busy' } end
  redis.call('ZADD', key, ARGV[at + 2], ARGV[at])
  local ttl = math.max(1, tonumber(ARGV[at + 2]) - tonumber(ARGV[at + 3]))
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
for i = 1, n do
  local at = 3 + (i - 1) * 4
  local key = KEYS[2 * i - 1]
  redis.call('INCRBYFLOAT', key, ARGV[at])
  if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ARGV[at + 3]) end
end
return { 'reserved' }
`;

/**
 * KEYS: the reserved counters, then the in-flight set. ARGV: counter count, has-in-flight,
 * the change of each counter (used - reserved), then the in-flight id. A counter that
 * expired meanwhile is not brought back.
 */
const SETTLE_SCRIPT = `
local n = tonumber(ARGV[1])
for i = 1, n do
  local delta = ARGV[2 + i]
  if tonumber(delta) ~= 0 and redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('INCRBYFLOAT', KEYS[i], delta)
  end
end
if ARGV[2] == '1' then redis.call('ZREM', KEYS[n + 1], ARGV[3 + n]) end
return 1
`;

/**
 * Creates a store whose counters live in Redis. Throws `invalid-options` for a client
 * without `evalSha`/`eval` or a wrong `timeoutMs`. A call that fails or times out rejects,
 * and the proxy refuses the request with 503 `limits_unavailable` (fail closed).
 */
export function createRedisCounterStore(options: RedisCounterStoreOptions): CounterStore {
  const { client } = options;
  if (
    typeof client !== 'object' ||
    client === null ||
    typeof client.evalSha !== 'function' ||
    typeof client.eval !== 'function'
  ) {
    throw new AirlockError(
      'invalid-options',
      '`client` must be a node-redis client (with `evalSha` and `eval`).',
    );
  }
  const timeoutMs = options.timeoutMs ?? 1000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new AirlockError('invalid-options', '`timeoutMs` must be a number above 0.');
  }
  const reserveScript = loadedScript(client, RESERVE_SCRIPT);
  const settleScript = loadedScript(client, SETTLE_SCRIPT);

  const run = async (
    script: ScriptRunner,
    keys: string[],
    args: string[],
    what: string,
  ): Promise<unknown> => {
    const waited = await waitFor(script(keys, args), { timeoutMs });
    if (waited.outcome !== 'settled') {
      throw new CounterStoreError(`Redis did not answer the ${what} within ${timeoutMs} ms.`);
    }
    return waited.value;
  };

  return {
    async reserve(claim: CounterClaim): Promise<ReserveOutcome> {
      const keys: string[] = [];
      const args = [String(claim.windows.length), claim.inFlight === undefined ? '0' : '1'];
      const reserved: string[] = [];
      for (const window of claim.windows) {
        const where = claimWindows(claim.at, window);
        keys.push(where.current, where.previous);
        reserved.push(where.current);
        args.push(
          String(window.amount),
          String(window.limit),
          String(where.previousWeight),
          String(where.ttlMs),
        );
      }
      if (claim.inFlight !== undefined) {
        const { key, id, limit, expiresAt } = claim.inFlight;
        keys.push(key);
        args.push(id, String(limit), String(expiresAt), String(claim.at));
      }
      const answer = await run(reserveScript, keys, args, 'reservation');
      return readReserveAnswer(answer, claim, reserved);
    },
    async settle(reservation: CounterReservation, used: readonly number[]): Promise<void> {
      const keys = [...reservation.keys];
      const args = [String(keys.length), reservation.inFlight === undefined ? '0' : '1'];
      for (const [index, amount] of reservation.amounts.entries()) {
        args.push(String((used[index] ?? 0) - amount));
      }
      if (reservation.inFlight !== undefined) {
        keys.push(reservation.inFlight.key);
        args.push(reservation.inFlight.id);
      }
      await run(settleScript, keys, args, 'settlement');
    },
  };
}

/**
 * Redis did not answer, or answered nonsense. Never reaches the page: the proxy answers
 * 503 `limits_unavailable` and logs this error's name.
 */
export class CounterStoreError extends Error {
  override readonly name = 'CounterStoreError';
}

type ScriptRunner = (keys: string[], args: string[]) => Promise<unknown>;

/**
 * Runs a script by its SHA-1, loading it with `EVAL` the first time and whenever the server
 * has forgotten it (a restart, `SCRIPT FLUSH`): the usual `NOSCRIPT` fallback.
 */
function loadedScript(client: RedisScriptClient, script: string): ScriptRunner {
  let sha: Promise<string> | undefined;
  return async (keys, args) => {
    sha ??= sha1Hex(script);
    try {
      return await client.evalSha(await sha, { keys, arguments: args });
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(script, { keys, arguments: args });
    }
  };
}

async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The script's answer as an outcome; anything else is a store failure (fail closed). */
function readReserveAnswer(
  answer: unknown,
  claim: CounterClaim,
  reserved: string[],
): ReserveOutcome {
  if (Array.isArray(answer)) {
    const [kind, index, current, previous] = answer as unknown[];
    if (kind === 'reserved') {
      return {
        kind: 'reserved',
        reservation: {
          keys: reserved,
          amounts: claim.windows.map((window) => window.amount),
          ...(claim.inFlight === undefined
            ? {}
            : { inFlight: { key: claim.inFlight.key, id: claim.inFlight.id } }),
        },
      };
    }
    if (kind === 'busy') return { kind: 'busy' };
    if (kind === 'refused') {
      return {
        kind: 'refused',
        index: Number(index),
        current: Number(current),
        previous: Number(previous),
      };
    }
  }
  throw new CounterStoreError('Redis answered the reservation with something unexpected.');
}
