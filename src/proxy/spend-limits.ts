/**
 * Per-user spending: requests and tokens per minute (sliding), a cost budget per UTC day,
 * and requests in flight at once, counted in a {@link CounterStore}. Before a request is
 * forwarded it reserves its worst case (every output limit at its cap, the input
 * estimated) against every limit at once; the usage the upstream reports settles the
 * reservation. So a burst of any size passes a limit by at most one request's reservation.
 */
import type { ModelPrice } from '../protocol/budgets.js';
import { randomId } from '../runtime/random-id.js';
import type { CounterReservation, CounterStore, WindowClaim } from './counter-store.js';

/** What one user may spend. Every field is optional; one left out is not limited. */
export interface SpendLimits {
  /** Requests forwarded in the last minute (sliding). */
  readonly requestsPerMinute?: number;
  /** Tokens (input + output) in the last minute (sliding): reserved at the worst case, settled at what the upstream reports. */
  readonly tokensPerMinute?: number;
  /** Cost per UTC day, in the currency of `prices`, reserved and settled as the tokens are. */
  readonly costPerDay?: number;
  /** Requests of one user in flight at once. */
  readonly concurrentRequests?: number;
}

/** Tokens one call used. */
export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** Which limit refused a request, and when to try again. */
export interface SpendRefusal {
  readonly limit: LimitName;
  readonly value: number;
  /** Milliseconds until the limit that refused lets a request through (a guess for `concurrentRequests`). */
  readonly retryAfterMs: number;
}

/** The limits a user may have, in the order they are checked. */
const LIMIT_NAMES = [
  'requestsPerMinute',
  'tokensPerMinute',
  'costPerDay',
  'concurrentRequests',
] as const;
type LimitName = (typeof LIMIT_NAMES)[number];

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Why `limits` is not a {@link SpendLimits}, or undefined when it is one. */
export function checkSpendLimits(limits: unknown): string | undefined {
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    return 'must be an object';
  }
  for (const [name, value] of Object.entries(limits)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) {
      return `unknown limit ${JSON.stringify(name)}`;
    }
    if (value === undefined) continue;
    const integer = name !== 'costPerDay';
    const valid =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= 0 &&
      (!integer || Number.isInteger(value));
    if (!valid) return `\`${name}\` must be ${integer ? 'an integer' : 'a number'} of at least 0`;
  }
  return undefined;
}

/** The proxy's limits with a caller's own on top. */
export function mergeLimits(base: SpendLimits, own: SpendLimits | undefined): SpendLimits {
  if (own === undefined) return base;
  const merged: { -readonly [K in keyof SpendLimits]: SpendLimits[K] } = { ...base };
  for (const name of LIMIT_NAMES) {
    const value = own[name];
    if (value !== undefined) merged[name] = value;
  }
  return merged;
}

/**
 * How long an in-flight slot is held when its request never settles (its process died):
 * longer than any answer the proxy relays should take.
 */
export const IN_FLIGHT_TTL_MS = 10 * MINUTE_MS;

/** What a concurrency refusal tells the client to wait: a slot frees when a request ends. */
const BUSY_RETRY_MS = 1_000;

/** An admitted request's reservation, settled once its answer is done. */
export interface SpendTicket {
  readonly userId: string;
  readonly reservation: CounterReservation;
  /** Which claim each counter is, in claim order. */
  readonly counters: readonly ('requests' | 'tokens' | 'cost')[];
  readonly price: ModelPrice | undefined;
}

/** The answer to {@link SpendMeter.reserve}. */
export type Admission =
  | { readonly kind: 'admitted'; readonly ticket: SpendTicket }
  | { readonly kind: 'refused'; readonly refusal: SpendRefusal };

/** The spend counters of one store, keyed by user. Any route may reserve and settle. */
export class SpendMeter {
  constructor(
    private readonly store: CounterStore,
    private readonly now: () => number,
  ) {}

  /**
   * Reserves one request and its worst case (`worstCase`, priced by `price`) against every
   * limit of `userId`, all or nothing. A route that spends no tokens (MCP) passes zero usage
   * and is held to `requestsPerMinute` and `concurrentRequests`. Rejects when the store fails.
   */
  async reserve(
    userId: string,
    limits: SpendLimits,
    worstCase: TokenUsage,
    price: ModelPrice | undefined,
  ): Promise<Admission> {
    const at = this.now();
    const windows: WindowClaim[] = [];
    const counters: SpendTicket['counters'][number][] = [];
    const limitOf: LimitName[] = [];
    const add = (
      counter: 'requests' | 'tokens' | 'cost',
      limit: LimitName,
      amount: number,
      windowMs: number,
    ): void => {
      const value = limits[limit];
      if (value === undefined) return;
      windows.push({
        key: key(counter, userId),
        amount,
        limit: value,
        windowMs,
        sliding: windowMs === MINUTE_MS,
      });
      counters.push(counter);
      limitOf.push(limit);
    };
    add('requests', 'requestsPerMinute', 1, MINUTE_MS);
    add('tokens', 'tokensPerMinute', worstCase.inputTokens + worstCase.outputTokens, MINUTE_MS);
    if (price !== undefined) add('cost', 'costPerDay', costOf(worstCase, price), DAY_MS);
    const outcome = await this.store.reserve({
      at,
      windows,
      ...(limits.concurrentRequests === undefined
        ? {}
        : {
            inFlight: {
              key: key('inflight', userId),
              limit: limits.concurrentRequests,
              id: randomId('req'),
              expiresAt: at + IN_FLIGHT_TTL_MS,
            },
          }),
    });
    if (outcome.kind === 'reserved') {
      return {
        kind: 'admitted',
        ticket: { userId, reservation: outcome.reservation, counters, price },
      };
    }
    if (outcome.kind === 'busy') {
      const value = limits.concurrentRequests ?? 0;
      return {
        kind: 'refused',
        refusal: { limit: 'concurrentRequests', value, retryAfterMs: BUSY_RETRY_MS },
      };
    }
    const window = windows[outcome.index];
    const limit = limitOf[outcome.index];
    if (window === undefined || limit === undefined) {
      throw new Error(`The counter store refused claim ${outcome.index}, which was not asked.`);
    }
    return {
      kind: 'refused',
      refusal: {
        limit,
        value: window.limit,
        retryAfterMs: retryAfterMs(at, window, outcome.current, outcome.previous),
      },
    };
  }

  /**
   * Settles a ticket with what the call used: input tokens priced as prompt tokens, output
   * tokens as completion tokens (the Chat Completions names). Frees its in-flight slot.
   */
  async settle(ticket: SpendTicket, used: TokenUsage): Promise<void> {
    const amounts = ticket.counters.map((counter) => {
      if (counter === 'requests') return 1;
      if (counter === 'tokens') return used.inputTokens + used.outputTokens;
      return ticket.price === undefined ? 0 : costOf(used, ticket.price);
    });
    await this.store.settle(ticket.reservation, amounts);
  }
}

function costOf(usage: TokenUsage, price: ModelPrice): number {
  return (
    (usage.inputTokens * price.promptPerMillion + usage.outputTokens * price.completionPerMillion) /
    1_000_000
  );
}

/**
 * When a refused window claim would next pass: for a fixed window, its end; for a sliding
 * one, when the previous window's weighted count has fallen far enough (after the current
 * window ends, when the current window is the one over the limit).
 */
export function retryAfterMs(
  at: number,
  window: WindowClaim,
  current: number,
  previous: number,
): number {
  const size = window.windowMs;
  const elapsed = at - Math.floor(at / size) * size;
  if (!window.sliding) return size - elapsed;
  if (current >= window.limit) {
    const fraction = current > 0 ? 1 - window.limit / current : 1;
    return size - elapsed + Math.floor(size * fraction) + 1;
  }
  if (previous <= 0) return 1;
  return Math.max(1, Math.floor(size - elapsed - (size * (window.limit - current)) / previous) + 1);
}

/** `airlock:tokens:<user>`; the store appends the window, after the user id's last colon. */
function key(counter: 'requests' | 'tokens' | 'cost' | 'inflight', userId: string): string {
  return `airlock:${counter}:${userId}`;
}
