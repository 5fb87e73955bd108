import { AirlockError } from '../errors/airlock-error';
import type { ErrorCode } from '../protocol/errors';
import { PROXY_ERROR_HEADER, type ProxyErrorCode } from '../protocol/proxy-refusals';
import { retryAfterMs } from './retry-after';

/** The request headers the SDK sends, which a proxy's CORS must allow. */
const SDK_HEADERS = 'authorization, content-type, x-stainless-*';

/** Longest excerpt of a response body quoted in an error message. */
const EXCERPT_CHARS = 160;

/**
 * The proxy's codes a model request can meet: the MCP OAuth routes' own answer MCP requests
 * only (left out, they cost the agent worker's start no bytes; were one to come, it would be
 * classified by its status like any endpoint's answer).
 */
type ModelRouteCode = Exclude<ProxyErrorCode, 'mcp_auth_required' | 'mcp_oauth_failed'>;

/**
 * The page's code for each answer Airlock's proxy made itself (marked by its
 * `x-airlock-proxy-error` header): its refusals get codes of their own, so a model the proxy
 * does not allow is not reported as a refused key. `undefined`: classified by status as any
 * endpoint's answer (a server-side fault of the proxy or the upstream).
 */
const PROXY_CODES: Readonly<Record<ModelRouteCode, ErrorCode | undefined>> = {
  not_found: 'request-refused',
  method_not_allowed: 'request-refused',
  origin_not_allowed: 'request-refused',
  invalid_json: 'request-refused',
  body_unreadable: 'request-refused',
  field_not_allowed: 'request-refused',
  invalid_field: 'request-refused',
  authorize_refused: 'proxy-unauthorized',
  model_not_allowed: 'model-not-allowed',
  body_too_large: 'limit-exceeded',
  limit_exceeded: 'limit-exceeded',
  rate_limited: 'limit-exceeded',
  budget_exceeded: 'limit-exceeded',
  // The MCP route's own refusals; a model request never meets them.
  mcp_method_not_allowed: 'request-refused',
  mcp_tool_not_allowed: 'request-refused',
  mcp_batch_not_allowed: 'request-refused',
  mcp_header_mismatch: 'request-refused',
  mcp_response_too_large: undefined,
  // The upstream refused the server's key: the proxy answers 502 so the page does not look
  // for credentials of its own, but the fix is the same as for a 401 of any endpoint.
  upstream_auth_failed: 'model-auth',
  authorize_failed: undefined,
  limits_unavailable: undefined,
  upstream_unreachable: undefined,
  upstream_rate_limited: undefined,
  upstream_error: undefined,
};

/** The longest `param` of a proxy refusal passed on in `details` (`messages[3]`, `costPerDay`). */
const MAX_PARAM_CHARS = 64;

/** What an HTTP error answer carried, as the SDK parsed it. */
export interface HttpFailure {
  readonly status: number;
  readonly headers: Headers | undefined;
  /** OpenAI's `error` object when the body was its error JSON; `undefined` for any other body. */
  readonly errorBody: unknown;
  /** The SDK's message: `"<status> <message>"`, or `"<status> <raw body>"` for a body that is not JSON. */
  readonly message: string;
}

/**
 * The typed error for an HTTP error answer. Auth failures point at the proxy and never
 * quote the server's text, which may name a (masked) key; bodies that are not OpenAI's
 * error JSON (a proxy's HTML page) are quoted as a short, tag-stripped excerpt.
 */
export function httpError(
  failure: HttpFailure,
  options: { readonly baseURL: string; readonly maxRetryAfterMs: number; readonly cause: unknown },
): AirlockError {
  const { status } = failure;
  const cause = options.cause;
  const proxyCode = proxyCodeOf(failure.headers);
  const refusal = proxyCode === undefined ? undefined : PROXY_CODES[proxyCode];
  if (proxyCode !== undefined && refusal !== undefined) {
    return proxyRefusal(failure, { proxyCode, code: refusal }, options);
  }
  if (status === 401 || status === 403) {
    return new AirlockError(
      'model-auth',
      `The model endpoint at ${options.baseURL} refused the request (${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'}). ` +
        "The credentials are the proxy's to add: check that the proxy holds a valid one for this model, and that it accepts this page's session headers.",
      { details: { status }, cause },
    );
  }
  // The SDK's message repeats the status in front; the error says it once.
  const said = failure.message.startsWith(`${status} `)
    ? failure.message.slice(`${status} `.length)
    : failure.message;
  const text = failure.errorBody === undefined ? excerpt(said) : bounded(said);
  const bodyExcerpt = failure.errorBody === undefined ? { bodyExcerpt: text } : {};
  const wait = retryAfterMs(failure.headers);
  const retryAfter = wait === undefined ? {} : { retryAfterMs: wait };
  if (status === 429) {
    const tooLong = wait !== undefined && wait > options.maxRetryAfterMs;
    return new AirlockError(
      'model-rate-limited',
      tooLong
        ? `The model endpoint is rate limited and asked to wait ${Math.round(wait / 1000)} s, longer than model.maxRetryAfterMs (${options.maxRetryAfterMs} ms): ${text}`
        : `The model endpoint is still rate limited after the retries: ${text}`,
      {
        details: { status, ...retryAfter, maxRetryAfterMs: options.maxRetryAfterMs },
        cause,
      },
    );
  }
  const marked = proxyCode === undefined ? {} : { proxyCode };
  return new AirlockError('model-http-error', `The model endpoint answered ${status}: ${text}`, {
    details: { status, ...marked, ...retryAfter, ...bodyExcerpt },
    cause,
  });
}

/**
 * An answer Airlock's proxy made itself, typed by its code and told in its own words (its
 * messages never hold the key or the upstream's text). `details`: `{ status, proxyCode,
 * param?, retryAfterMs?, bodyExcerpt? }`.
 */
function proxyRefusal(
  failure: HttpFailure,
  refusal: { readonly proxyCode: ProxyErrorCode; readonly code: ErrorCode },
  options: { readonly baseURL: string; readonly cause: unknown },
): AirlockError {
  const { status } = failure;
  const said = failure.message.startsWith(`${status} `)
    ? failure.message.slice(`${status} `.length)
    : failure.message;
  // `authorize`'s own answer is the app's: quoted as an excerpt unless it is OpenAI's error JSON.
  const text = failure.errorBody === undefined ? excerpt(said) : bounded(said);
  const param = paramOf(failure.errorBody);
  const wait = retryAfterMs(failure.headers);
  const where =
    refusal.code === 'model-auth'
      ? `The model proxy at ${options.baseURL} could not use its upstream`
      : `The model proxy at ${options.baseURL} refused the request`;
  return new AirlockError(refusal.code, `${where} (${status} ${refusal.proxyCode}): ${text}`, {
    details: {
      status,
      proxyCode: refusal.proxyCode,
      ...(param === undefined ? {} : { param }),
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
      ...(failure.errorBody === undefined ? { bodyExcerpt: text } : {}),
    },
    cause: options.cause,
  });
}

/** The proxy's code from its header, when it is one the proxy makes; anything else is ignored. */
function proxyCodeOf(headers: Headers | undefined): ModelRouteCode | undefined {
  const value = headers?.get(PROXY_ERROR_HEADER);
  if (value === null || value === undefined) return undefined;
  return Object.hasOwn(PROXY_CODES, value) ? (value as ModelRouteCode) : undefined;
}

/** OpenAI's `error.param`, when it is a short string. */
function paramOf(errorBody: unknown): string | undefined {
  if (typeof errorBody !== 'object' || errorBody === null) return undefined;
  const { param } = errorBody as { param?: unknown };
  return typeof param === 'string' && param.length <= MAX_PARAM_CHARS ? param : undefined;
}

/**
 * The typed error for a request that got no HTTP answer. In a browser a CORS refusal is
 * indistinguishable from a network failure (`TypeError: Failed to fetch`), so the message
 * names both, and what the proxy must allow.
 */
export function unreachableError(options: {
  readonly baseURL: string;
  readonly timedOut: boolean;
  readonly cause: unknown;
}): AirlockError {
  const message = options.timedOut
    ? `The model endpoint at ${options.baseURL} sent no response headers within model.requestTimeoutMs (after the retries).`
    : `The model endpoint at ${options.baseURL} could not be reached (no HTTP answer, after the retries). ` +
      `Either the network failed or the browser refused the response by CORS: the proxy must answer preflight requests from this page's origin and allow the headers the SDK sends (${SDK_HEADERS}).`;
  return new AirlockError('model-unreachable', message, {
    details: { timedOut: options.timedOut },
    cause: options.cause,
  });
}

/** The typed error for a stream that went silent. */
export function streamIdleError(timeoutMs: number, attempts: number): AirlockError {
  return new AirlockError(
    'model-stream-idle',
    `The model stream was silent for ${timeoutMs} ms${attempts > 1 ? ` (on ${attempts} attempts)` : ''}; the request was closed.`,
    { details: { timeoutMs, attempts } },
  );
}

/** A body that is not JSON (an HTML error page, most often), as a short line of its text. */
function excerpt(message: string): string {
  const text = message
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&[a-z#0-9]+;/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return bounded(text || '(an empty body)');
}

function bounded(text: string): string {
  return text.length <= EXCERPT_CHARS ? text : `${text.slice(0, EXCERPT_CHARS)}…`;
}
