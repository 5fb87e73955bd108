/**
 * Aborts its `signal` when it is left running for `timeoutMs` without a `stop`. The
 * model stream runs it only while it waits for the server, not while the loop is busy
 * with a chunk, so a slow page never counts as a silent server.
 */
export class IdleWatchdog {
  readonly #controller = new AbortController();
  readonly #timeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
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
    this.#timer = setTimeout(() => this.#controller.abort(), this.#timeoutMs);
  }

  /** Stops the countdown; also the cleanup, so it is safe to call in `finally`. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
