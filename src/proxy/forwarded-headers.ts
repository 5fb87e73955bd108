/**
 * Which headers cross the proxy. Both directions are allowlists: whatever the page sends
 * (its own `authorization`, cookies, an `openai-organization` picking another org) stays
 * behind, and only what the SDK needs comes back.
 */

import type { Redactor } from './redact-key.js';

/** Page request headers forwarded upstream, besides every `x-stainless-*` (SDK telemetry and retry count). */
const FORWARDED_REQUEST_HEADERS = ['accept'] as const;

/**
 * Upstream response headers returned to the page. Not `x-ratelimit-*` (the account's limits
 * and remaining quota, which are the operator's business) nor `openai-organization` /
 * `openai-project` (they name the key's account).
 */
const RETURNED_RESPONSE_HEADERS = new Set([
  'content-type',
  'cache-control',
  'retry-after',
  'retry-after-ms',
  'x-request-id',
  'openai-processing-ms',
  'openai-version',
]);

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
 * The upstream response headers the page may see, with the key redacted from their values.
 * Transport headers (`content-length`, `content-encoding`, `transfer-encoding`) stay
 * behind: fetch has already decoded the body, and the proxy may change its length.
 */
export function clientResponseHeaders(upstream: Headers, redact: Redactor): Headers {
  const headers = new Headers();
  for (const [name, value] of upstream) {
    if (isReturnedResponseHeader(name)) headers.set(name, redact(value));
  }
  return headers;
}

function isReturnedResponseHeader(name: string): boolean {
  return RETURNED_RESPONSE_HEADERS.has(name);
}
