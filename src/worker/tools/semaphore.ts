/** Lets at most `limit` holders in at once; the rest wait in arrival order. */
export class Semaphore {
  readonly #limit: number;
  readonly #waiting: Array<() => void> = [];
  #held = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves with a release function once a place is free. Call it exactly once. */
  async acquire(): Promise<() => void> {
    if (this.#held >= this.#limit) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#held += 1;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The place passes straight to the next waiter, so `held` stays the same.
      if (next) next();
      else this.#held -= 1;
    };
  }
}
