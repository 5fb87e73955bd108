import { realTimers, type Timers } from './timers';

/**
 * The one way Airlock schedules work for later: `later` once, `every` again and again.
 * Both return a cancel function that is safe to call twice and after the work ran, so a
 * `finally` or a `close` can always call it. Built on `Timers`, so a test's clock drives
 * them as it drives `waitFor`. Raw `setTimeout`/`setInterval` are banned outside this folder
 * (biome's `noRestrictedGlobals`).
 */

/** Cancels scheduled work; calling it again, or after the work ran, does nothing. */
export type Cancel = () => void;

/** Runs `callback` once after `ms` (0 or less: on a later task, after the current one ends). */
export function later(ms: number, callback: () => void, timers: Timers = realTimers): Cancel {
  let handle: unknown = timers.setTimeout(() => {
    handle = undefined;
    callback();
  }, ms);
  return () => {
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = undefined;
  };
}

/**
 * Runs `callback` every `ms` until cancelled. The next run is scheduled when one starts, so
 * a callback that throws does not stop the series; `callback` should not throw (the error
 * would be the platform's uncaught error).
 */
export function every(ms: number, callback: () => void, timers: Timers = realTimers): Cancel {
  let cancelNext: Cancel = () => {};
  const tick = () => {
    cancelNext = later(ms, tick, timers);
    callback();
  };
  cancelNext = later(ms, tick, timers);
  return () => cancelNext();
}
