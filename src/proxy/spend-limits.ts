/**
 * Per-user spending: requests and tokens per minute, and a cost budget per day, counted in
 * fixed windows of a {@link CounterStore}. A request is admitted or refused before it is
 * forwarded; the tokens it used are added once the upstream reports them.
 *
 * Tokens are known only after a response, so a user's concurrent requests can together
 * overshoot a token or cost limit by what they use at once; the next request is refused.
 */
import type { ModelPrice } from '../protocol/budgets.js';
import type { CounterStore } from './counter-store.js';

/** What one user may spend. Every field is optional; one left out is not limited. */
export interface SpendLimits {
  /** Requests started per minute (refused ones included). */
  readonly requestsPerMinute?: number;
  /** Tokens (input + output, as the upstream reports them) per minute. */
  readonly tokensPerMinute?: number;
  /** Cost per UTC day, in the currency of `prices`. */
  readonly costPerDay?: number;
}

/** Tokens one call used. */
export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** Which limit refused a request, and when to try again. */
export interface SpendRefusal {
  readonly limit: 'requestsPerMinute' | 'tokensPerMinute' | 'costPerDay';
  readonly value: number;
  /** Milliseconds until the window that refused ends. */
  readonly retryAfterMs: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Why `limits` is not a {@link SpendLimits}, or undefined when it is one. */
export function checkSpendLimits(limits: unknown): string | undefined {
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    return 'must be an object';
  }
  for (const [name, value] of Object.entries(limits)) {
    if (name !== 'requestsPerMinute' && name !== 'tokensPerMinute' && name !== 'costPerDay') {
      return `unknown limit "${name}"`;
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
  for (const name of ['requestsPerMinute', 'tokensPerMinute', 'costPerDay'] as const) {
    const value = own[name];
    if (value !== undefined) merged[name] = value;
  }
  return merged;
}

/** The spend counters of one store, keyed by user and window. */
export class SpendMeter {
  constructor(
    private readonly store: CounterStore,
    private readonly now: () => number,
  ) {}

  /**
   * Counts a request against `userId` and says whether it may go on. Cheap checks first:
   * the request counter is added to (every attempt counts), the token and cost counters
   * only read.
   */
  async admit(userId: string, limits: SpendLimits): Promise<SpendRefusal | undefined> {
    const at = this.now();
    const minute = windowOf(at, MINUTE_MS);
    if (limits.requestsPerMinute !== undefined) {
      const requests = await this.store.add(key('requests', minute.start, userId), 1, MINUTE_MS);
      if (requests > limits.requestsPerMinute) {
        return {
          limit: 'requestsPerMinute',
          value: limits.requestsPerMinute,
          retryAfterMs: minute.end - at,
        };
      }
    }
    if (limits.tokensPerMinute !== undefined) {
      const tokens = await this.store.get(key('tokens', minute.start, userId));
      if (tokens >= limits.tokensPerMinute) {
        return {
          limit: 'tokensPerMinute',
          value: limits.tokensPerMinute,
          retryAfterMs: minute.end - at,
        };
      }
    }
    if (limits.costPerDay !== undefined) {
      const day = windowOf(at, DAY_MS);
      const cost = await this.store.get(key('cost', day.start, userId));
      if (cost >= limits.costPerDay) {
        return { limit: 'costPerDay', value: limits.costPerDay, retryAfterMs: day.end - at };
      }
    }
    return undefined;
  }

  /**
   * Adds what a call used to the user's current token and cost windows. Input tokens are
   * priced as prompt tokens, output tokens as completion tokens (the Chat Completions names).
   */
  async record(userId: string, usage: TokenUsage, price: ModelPrice | undefined): Promise<void> {
    const at = this.now();
    const tokens = usage.inputTokens + usage.outputTokens;
    await this.store.add(key('tokens', windowOf(at, MINUTE_MS).start, userId), tokens, MINUTE_MS);
    if (price === undefined) return;
    const cost =
      (usage.inputTokens * price.promptPerMillion +
        usage.outputTokens * price.completionPerMillion) /
      1_000_000;
    await this.store.add(key('cost', windowOf(at, DAY_MS).start, userId), cost, DAY_MS);
  }
}

/** The fixed window of `size` ms holding `at`. Day windows start at UTC midnight. */
function windowOf(at: number, size: number): { start: number; end: number } {
  const start = Math.floor(at / size) * size;
  return { start, end: start + size };
}

/** `airlock:requests:<window start>:<user>`; the user id goes last, so it cannot forge another key. */
function key(counter: 'requests' | 'tokens' | 'cost', windowStart: number, userId: string): string {
  return `airlock:${counter}:${windowStart}:${userId}`;
}
