/**
 * How long a response asks the client to wait before trying again, read the way the
 * `openai` SDK reads it (`retry-after-ms`, then `retry-after` in seconds or as an HTTP
 * date), so the cap below judges the same wait the SDK would sleep.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const millis = headers?.get('retry-after-ms');
  if (millis) {
    const value = Number.parseFloat(millis);
    if (!Number.isNaN(value)) return Math.max(0, value);
  }
  const header = headers?.get('retry-after');
  if (!header) return undefined;
  const seconds = Number.parseFloat(header);
  if (!Number.isNaN(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Wraps `fetch` so the SDK never sleeps longer than `maxRetryAfterMs` before a retry: a
 * response asking for a longer wait is marked `x-should-retry: false`, which the SDK obeys,
 * and fails at once with the server's wait still in its headers. (The SDK itself honours
 * any Retry-After, two minutes included, with no way to cancel the sleep.)
 */
export function capRetryAfter(fetchImpl: typeof fetch, maxRetryAfterMs: number): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (response.ok) return response;
    const wait = retryAfterMs(response.headers);
    if (wait === undefined || wait <= maxRetryAfterMs) return response;
    const headers = new Headers(response.headers);
    headers.set('x-should-retry', 'false');
    return new Response(response.body, {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  };
}
