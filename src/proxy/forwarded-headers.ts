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

/** A request's headers as plain data: lower-case names, as Node's `IncomingMessage.headers` has them. */
export type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

/** A header's one value (a repeated one joined, as the Fetch API joins it), or undefined. */
export function headerOf(headers: HeaderRecord, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' || value === undefined ? value : value.join(', ');
}

/**
 * The headers of the upstream request: the page's safe ones, then the configured extras,
 * then the key, which nothing can override.
 */
export function upstreamRequestHeaders(
  request: HeaderRecord,
  extra: Readonly<Record<string, string>>,
  apiKey: string,
  hasJsonBody: boolean,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in request) {
    if (!name.startsWith('x-stainless-')) continue;
    const value = headerOf(request, name);
    if (value !== undefined) headers[name] = value;
  }
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = headerOf(request, name);
    if (value !== undefined) headers[name] = value;
  }
  // The body is re-checked JSON whatever the page labelled it (a text/plain POST, say).
  if (hasJsonBody) headers['content-type'] = 'application/json';
  for (const [name, value] of Object.entries(extra)) headers[name.toLowerCase()] = value;
  headers.authorization = `Bearer ${apiKey}`;
  return headers;
}

/**
 * The upstream response headers the page may see, with the key redacted from their values.
 * Transport headers (`content-length`, `content-encoding`, `transfer-encoding`) stay
 * behind: the body is relayed decoded, and the proxy may change its length.
 */
export function clientResponseHeaders(
  header: (name: string) => string | undefined,
  redact: Redactor,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of RETURNED_RESPONSE_HEADERS) {
    const value = header(name);
    if (value !== undefined) headers[name] = redact(value);
  }
  return headers;
}
