import { waitFor } from '../../timing/wait';

/**
 * The tools layer's names for the one wait in `src/timing/wait.ts`; kept so the tool
 * runners read as before. New code calls `waitFor` directly.
 */

/** What `withDeadline` resolves to when time ran out first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** Waits for `promise` at most `ms`; the timer is always cleared, so nothing lingers. */
export async function withDeadline<T>(
  promise: Promise<T>,
  ms: number,
): Promise<T | typeof TIMED_OUT> {
  const waited = await waitFor(promise, { timeoutMs: ms });
  return waited.outcome === 'settled' ? waited.value : TIMED_OUT;
}

/** Waits for `promise` unless `signal` aborts first, in which case it resolves to `onAbort()`. */
export async function unlessAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  onAbort: () => T,
): Promise<T> {
  const waited = await waitFor(promise, { signal });
  return waited.outcome === 'settled' ? waited.value : onAbort();
}
