import { realTimers, type Timers } from '../timing/timers';

/**
 * Aborts its `signal` when it is left running for `timeoutMs` without a `pause` or `stop`.
 * The model stream runs it only while it waits for the server, not while the loop is busy
 * with a chunk, so a slow page never counts as a silent server.
 *
 * One timer serves a whole stream: `start` and `pause` only note the time, and the timer,
 * when it fires, checks how long the watchdog has really run since its last `start` and
 * waits out the rest. A timer per chunk cost a `clearTimeout` and a `setTimeout` each.
 */
export class IdleWatchdog {
  readonly #controller = new AbortController();
  readonly #timeoutMs: number;
  readonly #timers: Timers;
  #timer: unknown;
  #armed = false;
  #running = false;
  #startedAt = 0;

  constructor(timeoutMs: number, timers: Timers = realTimers) {
    this.#timeoutMs = timeoutMs;
    this.#timers = timers;
  }

  /** Aborted when the watchdog fired. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once the timeout elapsed. */
  get fired(): boolean {
    return this.#controller.signal.aborted;
  }

  /** Starts (or restarts) the countdown. */
  start(): void {
    this.#startedAt = this.#timers.now();
    this.#running = true;
    if (!this.#armed) this.#arm(this.#timeoutMs);
  }

  /** Holds the countdown until the next `start`; the timer stays for the stream's next wait. */
  pause(): void {
    this.#running = false;
  }

  /** Stops the countdown and releases its timer; safe to call in `finally`. */
  stop(): void {
    this.#running = false;
    if (this.#armed) this.#timers.clearTimeout(this.#timer);
    this.#armed = false;
  }

  #arm(ms: number): void {
    this.#armed = true;
    this.#timer = this.#timers.setTimeout(() => this.#check(), ms);
  }

  #check(): void {
    this.#armed = false;
    if (!this.#running || this.fired) return;
    const silentMs = this.#timers.now() - this.#startedAt;
    if (silentMs >= this.#timeoutMs) this.#controller.abort();
    else this.#arm(this.#timeoutMs - silentMs);
  }
}
