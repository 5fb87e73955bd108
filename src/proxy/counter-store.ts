/**
 * Where per-user counts live. The interface is two calls a shared store can implement in
 * one command each (Redis: `INCRBYFLOAT` + `PEXPIRE … NX`, `GET`), so several proxy
 * processes can count one user together; the default keeps them in this process.
 */

/** A store of numeric counters that expire. Calls may be sync or async. */
export interface CounterStore {
  /**
   * Adds `amount` to the counter `key` and returns its new value. A counter that does not
   * exist starts at 0 and is forgotten `ttlMs` after this first add.
   */
  add(key: string, amount: number, ttlMs: number): number | Promise<number>;
  /** The counter's value; 0 when it does not exist or has expired. */
  get(key: string): number | Promise<number>;
}

/** Options of {@link createMemoryCounterStore}. */
export interface MemoryCounterStoreOptions {
  /** The clock, in milliseconds. Default `Date.now`. */
  readonly now?: () => number;
}

/** Sweep expired counters after this many adds, so memory follows the active users only. */
const SWEEP_EVERY_ADDS = 1024;

/**
 * Counters in this process's memory: right for one server, wrong for several (each would
 * count on its own, multiplying every limit by the number of processes).
 */
export function createMemoryCounterStore(options: MemoryCounterStoreOptions = {}): CounterStore {
  const now = options.now ?? Date.now;
  const counters = new Map<string, { value: number; expiresAt: number }>();
  let addsSinceSweep = 0;

  const live = (key: string): { value: number; expiresAt: number } | undefined => {
    const counter = counters.get(key);
    if (counter === undefined) return undefined;
    if (counter.expiresAt > now()) return counter;
    counters.delete(key);
    return undefined;
  };

  return {
    add(key, amount, ttlMs) {
      if (++addsSinceSweep >= SWEEP_EVERY_ADDS) {
        addsSinceSweep = 0;
        const at = now();
        for (const [name, counter] of counters) if (counter.expiresAt <= at) counters.delete(name);
      }
      const counter = live(key);
      if (counter) {
        counter.value += amount;
        return counter.value;
      }
      counters.set(key, { value: amount, expiresAt: now() + ttlMs });
      return amount;
    },
    get(key) {
      return live(key)?.value ?? 0;
    },
  };
}
