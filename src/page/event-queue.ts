/**
 * The events a reader has not taken yet, and the one reader waiting for more. A queued
 * event is handed over at once; only an empty queue waits (one promise per wait, not per
 * event). Shared by a run's stream and a watch's.
 */
export class EventQueue<T> {
  readonly #events: T[] = [];
  #wakeReader: (() => void) | undefined;
  #ended = false;

  /** True once no event will be added: the reader takes what is left, then is done. */
  get ended(): boolean {
    return this.#ended;
  }

  get length(): number {
    return this.#events.length;
  }

  push(event: T): void {
    this.#events.push(event);
    this.#wake();
  }

  /** Drops the oldest event (a queue that must stay bounded). */
  dropOldest(): void {
    this.#events.shift();
  }

  /** Drops every queued event and says how many there were. */
  clear(): number {
    const dropped = this.#events.length;
    this.#events.length = 0;
    this.#wake();
    return dropped;
  }

  end(): void {
    this.#ended = true;
    this.#wake();
  }

  /** The next event, waiting for one if none is queued; `taken` runs as each is handed over. */
  next(taken?: () => void): Promise<IteratorResult<T, undefined>> {
    if (this.#events.length > 0) {
      const value = this.#events.shift() as T;
      taken?.();
      return Promise.resolve({ done: false, value });
    }
    if (this.#ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise<void>((resolve) => {
      this.#wakeReader = resolve;
    }).then(() => this.next(taken));
  }

  #wake(): void {
    const wake = this.#wakeReader;
    this.#wakeReader = undefined;
    wake?.();
  }
}
