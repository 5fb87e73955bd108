import { realTimers, type Timers } from './wait';

/**
 * The one way Airlock schedules work for later: `later` once, `every` again and again.
 * Both return a cancel function that is safe to call twice and after the work ran, so a
 * `finally` or a `close` can always call it. Built on `Timers`, so a test's clock drives
 * them as it drives `waitFor`. Raw `setTimeout`/`setInterval` are banned outside this folder
 * (biome's `noRestrictedGlobals`).
 */

/** Cancels scheduled work; calling it again, or after the work ran, does nothing. */
export type Cancel = () => void;

/** Runs `callback` once after `ms` (0: on a later task, after the current one ends). */
export function later(ms: number, callback: () => void, timers: Timers = realTimers): Cancel {
  let handle: unknown = timers.setTimeout(
    () => {
      handle = undefined;
      callback();
    },
    Math.max(0, ms),
  );
  return () => {
    if (handle === undefined) return;
    timers.clearTimeout(handle);
    handle = undefined;
  };
}

/**
 * Runs `callback` every `ms` until cancelled. The next run is scheduled when one starts, so
 * a callback that throws does not stop the series; `callback` should not throw (the error
 * would be the platform's uncaught error).
 */
export function every(ms: number, callback: () => void, timers: Timers = realTimers): Cancel {
  let cancelNext: Cancel | undefined;
  const tick = () => {
    cancelNext = later(ms, tick, timers);
    callback();
  };
  cancelNext = later(ms, tick, timers);
  return () => {
    cancelNext?.();
    cancelNext = undefined;
  };
}

/**
 * A single pending run of `callback`: `schedule` arms it unless it is already armed (the
 * first call's delay holds), `cancel` disarms it. For "write soon, once" work such as a
 * debounced save or a batched flush.
 */
export class Pending {
  readonly #callback: () => void;
  readonly #timers: Timers;
  #cancel: Cancel | undefined;

  constructor(callback: () => void, timers: Timers = realTimers) {
    this.#callback = callback;
    this.#timers = timers;
  }

  /** True while a run is scheduled. */
  get armed(): boolean {
    return this.#cancel !== undefined;
  }

  /** Schedules a run after `ms` unless one is already scheduled. */
  schedule(ms: number): void {
    this.#cancel ??= later(
      ms,
      () => {
        this.#cancel = undefined;
        this.#callback();
      },
      this.#timers,
    );
  }

  /** Drops the scheduled run, if any. */
  cancel(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }
}
