/**
 * The one way Airlock waits with a deadline and an abort. Everything that races a promise
 * against a timer or a signal goes through `waitFor`, so the rules live in one place: the
 * caller's abort wins over the deadline, the timer and the listener are always released,
 * and a promise that loses the race may reject later without going unhandled.
 *
 * Built on `AbortSignal.any`; the deadline is a signal too, but made from a timer of
 * `Timers` rather than `AbortSignal.timeout`, because that one can neither be cleared (a
 * 30 s tool deadline would outlive every fast call) nor driven by a test's clock.
 */

import { realTimers, type Timers } from './timers';

/** How a wait ended. */
export type Waited<T> =
  | { readonly outcome: 'settled'; readonly value: T }
  | { readonly outcome: 'timed-out' }
  | { readonly outcome: 'aborted'; readonly reason: unknown };

/** What bounds a wait. */
export interface WaitOptions {
  /** Ends the wait as `aborted` (checked first, so an abort wins over a deadline that fired at once). */
  readonly signal?: AbortSignal | undefined;
  /** Ends the wait as `timed-out` after this long. */
  readonly timeoutMs?: number | undefined;
  readonly timers?: Timers | undefined;
}

/** A signal that aborts with a `TimeoutError` after `ms`, and `clear` to release its timer. */
export function timeoutSignal(
  ms: number,
  timers: Timers = realTimers,
): { readonly signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const handle = timers.setTimeout(
    () => controller.abort(new DOMException(`Timed out after ${ms} ms.`, 'TimeoutError')),
    Math.max(0, ms),
  );
  return { signal: controller.signal, clear: () => timers.clearTimeout(handle) };
}

/**
 * Waits for `promise` unless `options.signal` aborts or `options.timeoutMs` passes first.
 * A rejection of `promise` before either is passed on.
 */
export async function waitFor<T>(promise: Promise<T>, options: WaitOptions): Promise<Waited<T>> {
  const { signal } = options;
  const deadline =
    options.timeoutMs === undefined ? undefined : timeoutSignal(options.timeoutMs, options.timers);
  const signals = [signal, deadline?.signal].filter((item): item is AbortSignal => !!item);
  const ended = (): Waited<T> =>
    signal?.aborted ? { outcome: 'aborted', reason: signal.reason } : { outcome: 'timed-out' };
  // The losing promise may still reject later; that is expected and must not go unhandled.
  promise.catch(() => {});
  if (signals.length === 0) return { outcome: 'settled', value: await promise };
  const any = signals.length === 1 ? (signals[0] as AbortSignal) : AbortSignal.any(signals);
  let onEnd: (() => void) | undefined;
  try {
    if (any.aborted) return ended();
    const stopped = new Promise<Waited<T>>((resolve) => {
      onEnd = () => resolve(ended());
      any.addEventListener('abort', onEnd, { once: true });
    });
    return await Promise.race([
      promise.then((value): Waited<T> => ({ outcome: 'settled', value })),
      stopped,
    ]);
  } finally {
    if (onEnd) any.removeEventListener('abort', onEnd);
    deadline?.clear();
  }
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export async function sleep(
  ms: number,
  options: { readonly signal?: AbortSignal | undefined; readonly timers?: Timers } = {},
): Promise<boolean> {
  if (options.signal?.aborted) return false;
  if (ms <= 0) return true;
  const waited = await waitFor(new Promise<never>(() => {}), { ...options, timeoutMs: ms });
  return waited.outcome === 'timed-out';
}
