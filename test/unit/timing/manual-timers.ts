import type { Timers } from '../../../src/timing/timers';

/** Timers on a clock the test moves by hand: nothing fires until `advance` passes its time. */
export class ManualTimers implements Timers {
  #now = 0;
  #nextId = 1;
  readonly #pending = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#nextId++;
    this.#pending.set(id, { at: this.#now + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#pending.delete(handle as number);
  }

  /** Timers set and not yet fired or cleared. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Moves the clock on by `ms`, firing due timers in time order; awaits the microtasks they start. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      const due = [...this.#pending.entries()]
        .filter(([, timer]) => timer.at <= until)
        .sort(([, a], [, b]) => a.at - b.at)[0];
      if (!due) break;
      const [id, timer] = due;
      this.#pending.delete(id);
      this.#now = timer.at;
      timer.callback();
      await flush();
    }
    this.#now = until;
    await flush();
  }
}

/** Lets every queued promise reaction run. */
export async function flush(): Promise<void> {
  for (let round = 0; round < 10; round++) await Promise.resolve();
}
