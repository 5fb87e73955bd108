/**
 * Which headers cross the proxy. Both directions are allowlists: whatever the page sends
 * (its own `authorization`, cookies, an `openai-organization` picking another org) stays
 * behind, and only what the SDK needs comes back.
 */

/** Page request headers forwarded upstream, besides every `x-stainless-*` (SDK telemetry and retry count). */
const FORWARDED_REQUEST_HEADERS = ['accept'] as const;

/** Upstream response headers returned to the page, besides every `x-ratelimit-*` and `openai-*`. */
const RETURNED_RESPONSE_HEADERS = new Set([
  'content-type',
  'cache-control',
  'retry-after',
  'retry-after-ms',
  'x-request-id',
  'x-should-retry',
]);

/** `openai-*` response headers that name the key's account; the page has no use for them. */
const ACCOUNT_RESPONSE_HEADERS = new Set(['openai-organization', 'openai-project']);

/**
 * The headers of the upstream request: the page's safe ones, then the configured extras,
 * then the key, which nothing can override.
 */
export function upstreamRequestHeaders(
  request: Request,
  extra: Readonly<Record<string, string>>,
  apiKey: string,
  hasJsonBody: boolean,
): Headers {
  const headers = new Headers();
  for (const [name, value] of request.headers) {
    if (name.startsWith('x-stainless-')) headers.set(name, value);
  }
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  // The body is re-checked JSON whatever the page labelled it (a text/plain POST, say).
  if (hasJsonBody) headers.set('content-type', 'application/json');
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  headers.set('authorization', `Bearer ${apiKey}`);
  return headers;
}

/**
 * The upstream response headers the page may see. Transport headers (`content-length`,
 * `content-encoding`, `transfer-encoding`) stay behind: fetch has already decoded the body.
 */
export function clientResponseHeaders(upstream: Headers): Headers {
  const headers = new Headers();
  for (const [name, value] of upstream) {
    if (isReturnedResponseHeader(name)) headers.set(name, value);
  }
  return headers;
}

function isReturnedResponseHeader(name: string): boolean {
  if (RETURNED_RESPONSE_HEADERS.has(name)) return true;
  if (name.startsWith('x-ratelimit-')) return true;
  return name.startsWith('openai-') && !ACCOUNT_RESPONSE_HEADERS.has(name);
}
