/**
 * `promise`, marked as handled until someone awaits it: a failure met while another wait
 * is pending is still thrown where it is awaited, never reported as unhandled.
 */
export function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
