/** What `withDeadline` resolves to when time ran out first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** Waits for `promise` at most `ms`; the timer is always cleared, so nothing lingers. */
export async function withDeadline<T>(
  promise: Promise<T>,
  ms: number,
): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for `promise` unless `signal` aborts first, in which case it resolves to `onAbort()`. */
export async function unlessAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  onAbort: () => T,
): Promise<T> {
  if (signal.aborted) return onAbort();
  let listener: (() => void) | undefined;
  const aborted = new Promise<T>((resolve) => {
    listener = () => resolve(onAbort());
    signal.addEventListener('abort', listener, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (listener) signal.removeEventListener('abort', listener);
  }
}
