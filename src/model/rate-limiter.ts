import type { RateLimitConfig } from '../protocol/budgets';

/** A claim on the limiter for one model call. */
export interface Reservation {
  /** How long the call must wait before it may go out (0: at once). */
  readonly waitMs: number;
  /** The bucket that made it wait longest. */
  readonly limit: 'requests' | 'tokens';
  /** Gives back what was taken, for a call that never went out (aborted while waiting). */
  cancel(): void;
  /** Corrects the token estimate with what the call really used. */
  settle(actualTokens: number): void;
}

/**
 * One bucket: it holds up to `capacity`, refills at `perMs`, and may go below zero. A
 * taker that drives it negative waits until the refill brings it back to zero.
 */
class Bucket {
  readonly #capacity: number;
  readonly #perMs: number;
  readonly #now: () => number;
  #level: number;
  #at: number;

  constructor(capacity: number, perMinute: number, now: () => number) {
    this.#capacity = capacity;
    this.#perMs = perMinute / 60_000;
    this.#now = now;
    this.#level = capacity;
    this.#at = now();
  }

  /** Takes `amount` and returns how long the taker waits for it. */
  take(amount: number): number {
    this.#refill();
    this.#level -= amount;
    return this.#level < 0 ? -this.#level / this.#perMs : 0;
  }

  /** Gives `amount` back (negative: takes more), never above capacity. */
  give(amount: number): void {
    this.#refill();
    this.#level = Math.min(this.#capacity, this.#level + amount);
  }

  #refill(): void {
    const now = this.#now();
    this.#level = Math.min(this.#capacity, this.#level + (now - this.#at) * this.#perMs);
    this.#at = now;
  }
}

/**
 * Token buckets for requests and tokens per minute, shared by every run of an agent.
 * Each call reserves at once, in arrival order (so calls are served first come, first
 * served, without a queue), and is told how long to wait; waits are computed, not
 * polled. A call's tokens are not known in advance: it reserves an estimate and the
 * difference is settled when its usage arrives, so a big call delays the ones after it.
 */
export class RateLimiter {
  readonly #requests: Bucket | undefined;
  readonly #tokens: Bucket | undefined;

  constructor(config: RateLimitConfig, now: () => number = () => performance.now()) {
    const { requestsPerMinute, tokensPerMinute } = config;
    // One second's worth by default: spread over the minute, as providers enforce it in slices.
    const burst = config.requestBurst ?? Math.max(1, Math.floor((requestsPerMinute ?? 0) / 60));
    this.#requests =
      requestsPerMinute === undefined ? undefined : new Bucket(burst, requestsPerMinute, now);
    // A whole minute's worth: calls differ in size, and one larger than a second's worth must still fit.
    this.#tokens =
      tokensPerMinute === undefined ? undefined : new Bucket(tokensPerMinute, tokensPerMinute, now);
  }

  /** Reserves one call of about `estimatedTokens` tokens. */
  reserve(estimatedTokens: number): Reservation {
    const requestWait = this.#requests?.take(1) ?? 0;
    const tokenWait = this.#tokens?.take(estimatedTokens) ?? 0;
    let open = true;
    return {
      waitMs: Math.max(requestWait, tokenWait),
      limit: tokenWait > requestWait ? 'tokens' : 'requests',
      cancel: () => {
        if (!open) return;
        open = false;
        this.#requests?.give(1);
        this.#tokens?.give(estimatedTokens);
      },
      settle: (actualTokens) => {
        if (!open) return;
        open = false;
        this.#tokens?.give(estimatedTokens - actualTokens);
      },
    };
  }
}
