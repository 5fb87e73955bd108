/**
 * Who may call the proxy from a browser. Same-origin pages always may; other origins only
 * when listed. A cross-origin request from an unlisted origin is refused outright rather
 * than merely left unreadable: a "simple" POST (text/plain, no preflight) would otherwise
 * still reach the upstream and spend the key's quota on another site's behalf.
 */

/** `'*'`, or the allowed origins normalised by `URL`. */
export type AllowedOrigins = '*' | ReadonlySet<string>;

/** Response headers the browser shows page code without being told (CORS-safelisted). */
const SAFELISTED_RESPONSE_HEADERS = new Set([
  'cache-control',
  'content-language',
  'content-length',
  'content-type',
  'expires',
  'last-modified',
  'pragma',
]);

/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * Whether `request` comes from a browser page on another origin that is not allowed.
 * Requests without an `Origin` (servers, curl, same-origin GETs) are not browser
 * cross-origin calls and pass.
 */
export function isForeignOrigin(request: Request, allowedOrigins: AllowedOrigins): boolean {
  return isForeignCaller(
    request.headers.get('origin') ?? undefined,
    request.headers.get('sec-fetch-site') ?? undefined,
    () => new URL(request.url).host,
    allowedOrigins,
  );
}

/**
 * {@link isForeignOrigin} on plain data: the `Origin` and `Sec-Fetch-Site` headers and the
 * host the request was sent to (asked only when the browser did not say).
 */
export function isForeignCaller(
  origin: string | undefined,
  fetchSite: string | undefined,
  host: () => string,
  allowedOrigins: AllowedOrigins,
): boolean {
  if (origin === undefined) return false;
  if (allowedOriginIn(origin, allowedOrigins) !== null) return false;
  return !isSameOrigin(origin, fetchSite, host);
}

/**
 * The answer to a CORS preflight: 204, with allow-headers only for an allowed origin. An
 * MCP route also allows DELETE, which ends a session.
 */
export function preflightResponse(
  request: Request,
  allowedOrigins: AllowedOrigins,
  mcp = false,
): Response {
  const headers = new Headers();
  if (varies(allowedOrigins)) headers.set('vary', 'Origin, Access-Control-Request-Headers');
  const origin = allowedOriginOf(request, allowedOrigins);
  if (origin !== null) {
    headers.set('access-control-allow-origin', origin);
    headers.set(
      'access-control-allow-methods',
      mcp ? 'GET, POST, DELETE, OPTIONS' : 'GET, POST, OPTIONS',
    );
    // The openai SDK sends `authorization` and a changing set of `x-stainless-*` headers;
    // echoing is safe because the handler forwards only an allowlist of them anyway.
    const requested = request.headers.get('access-control-request-headers');
    if (requested !== null) headers.set('access-control-allow-headers', requested);
    headers.set('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS);
  }
  return new Response(null, { status: 204, headers });
}

/**
 * Adds the CORS headers an actual response needs, in place: allow-origin for an allowed
 * origin, and expose-headers for what the SDK reads (`retry-after`, `x-request-id`, …).
 */
export function applyCorsHeaders(
  headers: Headers,
  request: Request,
  allowedOrigins: AllowedOrigins,
): void {
  if (varies(allowedOrigins)) headers.append('vary', 'Origin');
  const origin = allowedOriginOf(request, allowedOrigins);
  if (origin === null) return;
  headers.set('access-control-allow-origin', origin);
  const exposed = [...headers.keys()].filter(
    (name) => !SAFELISTED_RESPONSE_HEADERS.has(name) && !name.startsWith('access-control-'),
  );
  if (exposed.length > 0) headers.set('access-control-expose-headers', exposed.join(', '));
}

/** The request's `Origin` when it may read responses, else null. */
function allowedOriginOf(request: Request, allowedOrigins: AllowedOrigins): string | null {
  return allowedOriginIn(request.headers.get('origin') ?? undefined, allowedOrigins);
}

/** `origin` when it may read responses, else null. */
function allowedOriginIn(
  origin: string | undefined,
  allowedOrigins: AllowedOrigins,
): string | null {
  if (origin === undefined || origin === 'null') return null;
  return allowedOrigins === '*' || allowedOrigins.has(origin) ? origin : null;
}

/**
 * Browsers mark same-origin requests with `Sec-Fetch-Site`, which page code cannot set;
 * older ones are judged by host, since a TLS-terminating reverse proxy changes the scheme
 * the server sees but keeps the `Host`.
 */
function isSameOrigin(origin: string, fetchSite: string | undefined, host: () => string): boolean {
  if (fetchSite !== undefined) return fetchSite === 'same-origin';
  try {
    return new URL(origin).host === host();
  } catch {
    return false;
  }
}

/**
 * {@link applyCorsHeaders} on plain data: adds to `headers` (lower-case names, in place) what
 * an answer to a request from `origin` needs.
 */
export function addCorsHeaders(
  headers: Record<string, string>,
  origin: string | undefined,
  allowedOrigins: AllowedOrigins,
): void {
  if (varies(allowedOrigins)) {
    headers.vary = headers.vary === undefined ? 'Origin' : `${headers.vary}, Origin`;
  }
  const allowed = allowedOriginIn(origin, allowedOrigins);
  if (allowed === null) return;
  headers['access-control-allow-origin'] = allowed;
  const exposed = Object.keys(headers).filter(
    (name) => !SAFELISTED_RESPONSE_HEADERS.has(name) && !name.startsWith('access-control-'),
  );
  if (exposed.length > 0) headers['access-control-expose-headers'] = exposed.join(', ');
}

function varies(allowedOrigins: AllowedOrigins): boolean {
  return allowedOrigins === '*' || allowedOrigins.size > 0;
}
