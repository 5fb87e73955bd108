/**
 * The clock and timers everything in `timing/` runs on: the platform's, or a test's manual
 * ones. Apart from `wait.ts` so that code needing only a timer (`later`) does not bring the
 * waits with it: the page's first chunk holds `later`, and `waitFor` loads with what uses it.
 */

/** A clock and timers; tests pass a manual one. */
export interface Timers {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The platform's clock and timers. */
export const realTimers: Timers = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
