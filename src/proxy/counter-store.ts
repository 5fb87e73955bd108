/**
 * Where per-user counts live. A request *reserves* its worst case against every limit in
 * one atomic step and *settles* the reservation with what it really used; a shared store
 * does each step in one command (Redis: one Lua script, see `redis-counter-store.ts`), so
 * any number of proxy processes count one user together and a burst of any size passes a
 * limit by at most one reservation. The default keeps the counts in this process.
 *
 * The interface is route-neutral: any route (the model routes, the MCP route) builds a
 * {@link CounterClaim} per request and settles it when the answer is done.
 */

/** One amount to count against one limit, in windows of `windowMs`. */
export interface WindowClaim {
  /** The counter's name; the store appends `:<window start>`. */
  readonly key: string;
  /** What to reserve: the request's worst case. */
  readonly amount: number;
  /** Reserved only while the counted value is below this, so one reservation may pass it. */
  readonly limit: number;
  /** The window's length in ms; windows start at multiples of it (a UTC day at midnight). */
  readonly windowMs: number;
  /**
   * `true`: the value counted is this window's plus the previous window's weighted by the
   * part of it still inside the last `windowMs`, so a burst at a window's edge and another
   * just after it are counted together. `false`: this window only (a budget per UTC day).
   */
  readonly sliding: boolean;
}

/** A per-user cap on requests in flight at once. */
export interface InFlightClaim {
  readonly key: string;
  readonly limit: number;
  /** This request's id in the set of requests in flight. */
  readonly id: string;
  /** When a slot never released (its process died) is freed, on the claim's clock. */
  readonly expiresAt: number;
}

/** What one request asks to reserve, all or nothing. */
export interface CounterClaim {
  /** Now, in ms since the epoch: the proxy's clock, so every store counts the same windows. */
  readonly at: number;
  readonly windows: readonly WindowClaim[];
  readonly inFlight?: InFlightClaim;
}

/** What a store reserved: plain data, so any store (or process) can settle it. */
export interface CounterReservation {
  /** The windowed counter each {@link WindowClaim} was added to, in claim order. */
  readonly keys: readonly string[];
  /** The amounts reserved, in claim order. */
  readonly amounts: readonly number[];
  readonly inFlight?: { readonly key: string; readonly id: string };
}

/** The answer to a {@link CounterClaim}. Nothing is counted unless it is `reserved`. */
export type ReserveOutcome =
  | { readonly kind: 'reserved'; readonly reservation: CounterReservation }
  /** A window limit is reached: which claim, and its counts, so the caller can say when to retry. */
  | {
      readonly kind: 'refused';
      readonly index: number;
      readonly current: number;
      readonly previous: number;
    }
  /** The in-flight cap is reached. */
  | { readonly kind: 'busy' };

/** A store of per-user counters. Calls may be sync or async; a failure rejects (or throws). */
export interface CounterStore {
  /** Checks every limit of `claim` and, when all are below, adds every amount, atomically. */
  reserve(claim: CounterClaim): ReserveOutcome | Promise<ReserveOutcome>;
  /**
   * Replaces the reserved amounts by `used` (in claim order; 0 for a request that cost
   * nothing) in the windows they were reserved in, and frees the in-flight slot. A window
   * that has expired meanwhile is left alone.
   */
  settle(reservation: CounterReservation, used: readonly number[]): void | Promise<void>;
}

/** The windowed counters a claim touches: where to add, what to read, and with what weight. */
export interface ClaimWindows {
  /** The counter of the window holding `at`. */
  readonly current: string;
  /** The counter of the window before it. */
  readonly previous: string;
  /** The weight of the previous window's count: 0 for a fixed window. */
  readonly previousWeight: number;
  /** How long a counter lives after its first add: long enough to serve as `previous`. */
  readonly ttlMs: number;
}

/** Where each window claim of a request is counted; shared by every store, so they agree. */
export function claimWindows(at: number, claim: WindowClaim): ClaimWindows {
  const start = Math.floor(at / claim.windowMs) * claim.windowMs;
  return {
    current: `${claim.key}:${start}`,
    previous: `${claim.key}:${start - claim.windowMs}`,
    previousWeight: claim.sliding ? (start + claim.windowMs - at) / claim.windowMs : 0,
    ttlMs: claim.sliding ? 2 * claim.windowMs : claim.windowMs,
  };
}

/** A memory store, with a way to read a counter (tests, metrics). */
export interface MemoryCounterStore extends CounterStore {
  /** The value of the windowed counter `key` (`<claim key>:<window start>`); 0 when missing. */
  value(key: string): number;
  /** How many requests hold a slot of the in-flight set `key`. */
  inFlight(key: string): number;
}

/** Sweep expired counters after this many reservations, so memory follows the active users only. */
const SWEEP_EVERY = 1024;

/**
 * Counters in this process's memory: right for one server, wrong for several (each would
 * count on its own, multiplying every limit by the number of processes). Expiry follows
 * the claims' clock.
 */
export function createMemoryCounterStore(): MemoryCounterStore {
  const counters = new Map<string, { value: number; expiresAt: number }>();
  const flights = new Map<string, Map<string, number>>();
  let latest = Number.NEGATIVE_INFINITY;
  let sinceSweep = 0;

  const read = (key: string, at: number): number => {
    const counter = counters.get(key);
    return counter !== undefined && counter.expiresAt > at ? counter.value : 0;
  };
  const sweep = (at: number): void => {
    for (const [key, counter] of counters) if (counter.expiresAt <= at) counters.delete(key);
    for (const [key, slots] of flights) {
      for (const [id, expiresAt] of slots) if (expiresAt <= at) slots.delete(id);
      if (slots.size === 0) flights.delete(key);
    }
  };

  return {
    reserve(claim) {
      const { at } = claim;
      latest = Math.max(latest, at);
      if (++sinceSweep >= SWEEP_EVERY) {
        sinceSweep = 0;
        sweep(at);
      }
      const windows = claim.windows.map((window) => claimWindows(at, window));
      for (const [index, window] of windows.entries()) {
        const current = read(window.current, at);
        const previous = window.previousWeight > 0 ? read(window.previous, at) : 0;
        const limit = claim.windows[index]?.limit ?? 0;
        if (current + previous * window.previousWeight >= limit) {
          return { kind: 'refused', index, current, previous };
        }
      }
      if (claim.inFlight !== undefined) {
        const slots = flights.get(claim.inFlight.key) ?? new Map<string, number>();
        for (const [id, expiresAt] of slots) if (expiresAt <= at) slots.delete(id);
        if (slots.size >= claim.inFlight.limit) return { kind: 'busy' };
        slots.set(claim.inFlight.id, claim.inFlight.expiresAt);
        flights.set(claim.inFlight.key, slots);
      }
      for (const [index, window] of windows.entries()) {
        const amount = claim.windows[index]?.amount ?? 0;
        const counter = counters.get(window.current);
        if (counter !== undefined && counter.expiresAt > at) counter.value += amount;
        else counters.set(window.current, { value: amount, expiresAt: at + window.ttlMs });
      }
      return {
        kind: 'reserved',
        reservation: {
          keys: windows.map((window) => window.current),
          amounts: claim.windows.map((window) => window.amount),
          ...(claim.inFlight === undefined
            ? {}
            : { inFlight: { key: claim.inFlight.key, id: claim.inFlight.id } }),
        },
      };
    },
    settle(reservation, used) {
      for (const [index, key] of reservation.keys.entries()) {
        const counter = counters.get(key);
        if (counter === undefined || counter.expiresAt <= latest) continue;
        counter.value += (used[index] ?? 0) - (reservation.amounts[index] ?? 0);
      }
      if (reservation.inFlight !== undefined) {
        const slots = flights.get(reservation.inFlight.key);
        slots?.delete(reservation.inFlight.id);
        if (slots?.size === 0) flights.delete(reservation.inFlight.key);
      }
    },
    value(key) {
      return counters.get(key)?.value ?? 0;
    },
    inFlight(key) {
      return flights.get(key)?.size ?? 0;
    },
  };
}
