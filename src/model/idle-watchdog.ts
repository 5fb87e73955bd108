import { realTimers, type Timers } from '../timing/wait';

/**
 * Aborts its `signal` when it is left running for `timeoutMs` without a `stop`. The
 * model stream runs it only while it waits for the server, not while the loop is busy
 * with a chunk, so a slow page never counts as a silent server.
 */
export class IdleWatchdog {
  readonly #controller = new AbortController();
  readonly #timeoutMs: number;
  readonly #timers: Timers;
  #timer: unknown;
  #running = false;

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
    this.stop();
    this.#running = true;
    this.#timer = this.#timers.setTimeout(() => this.#controller.abort(), this.#timeoutMs);
  }

  /** Stops the countdown; also the cleanup, so it is safe to call in `finally`. */
  stop(): void {
    if (this.#running) this.#timers.clearTimeout(this.#timer);
    this.#running = false;
  }
}
