/**
 * Where the proxy keeps what MCP OAuth needs between requests: each user's tokens per server,
 * the pending authorizations (`state` → PKCE verifier, user, expiry) and dynamically
 * registered clients. One interface beside `CounterStore`, with the same two backends: this
 * process's memory, and Redis for several processes (`createRedisMcpAuthStore`), since the
 * callback of an authorization may reach another process than its start.
 */

/** A string store with expiry and an atomic read-and-delete. Values are the proxy's own JSON. */
export interface McpAuthStore {
  /** Stores `value` under `key`, replacing what was there; gone after `ttlMs` when given. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** The value under `key`, or undefined. */
  get(key: string): Promise<string | undefined>;
  /** Reads and deletes `key` at once: of two calls, only one gets the value (a `state` is used once). */
  take(key: string): Promise<string | undefined>;
  /** Deletes `key`; nothing when it is missing. */
  delete(key: string): Promise<void>;
}

/** Sweep expired entries after this many writes, so memory follows the live entries only. */
const SWEEP_EVERY = 256;

/**
 * A store in this process's memory: right for one server. Across several processes a
 * callback that lands on another process than its start finds no `state`: use Redis.
 */
export function createMemoryMcpAuthStore(now: () => number = Date.now): McpAuthStore {
  const entries = new Map<string, { value: string; expiresAt: number }>();
  let writes = 0;
  const live = (key: string): string | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry.value;
  };
  return {
    async set(key, value, ttlMs) {
      if (++writes % SWEEP_EVERY === 0) {
        const at = now();
        for (const [name, entry] of entries) if (entry.expiresAt <= at) entries.delete(name);
      }
      entries.set(key, {
        value,
        expiresAt: ttlMs === undefined ? Number.POSITIVE_INFINITY : now() + ttlMs,
      });
    },
    async get(key) {
      return live(key);
    },
    async take(key) {
      const value = live(key);
      entries.delete(key);
      return value;
    },
    async delete(key) {
      entries.delete(key);
    },
  };
}
