/**
 * Upstream error answers, mapped to the proxy's own. The upstream's body is never relayed:
 * a provider's error names the organisation, the project and part of the key. The page
 * gets the status, the provider's error `code` when it is a plain identifier
 * (`context_length_exceeded`), and a sentence of ours.
 */
import { errorAnswer, type ProxyAnswer, responseOf } from './error-response.js';
import type { ProxyLogger } from './proxy-options.js';
import type { Redactor } from './redact-key.js';
import { readBodyWithin } from './request-body.js';

/** Error bodies are read this far, for the log and the code; real ones are a few hundred bytes. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** An upstream `code` or `param` worth passing on: short, lower-case identifier characters only. */
const IDENTIFIER = /^[a-z][a-z0-9_.[\]]{0,63}$/;

/** The response headers of an upstream error the page may still see: how long to wait. */
const RETRY_HEADERS = ['retry-after', 'retry-after-ms'];

/** What the page learns of an upstream error, and what the operator's log gets. */
export async function upstreamErrorResponse(
  upstream: Response,
  context: UpstreamErrorContext,
): Promise<Response> {
  let text: string;
  try {
    const read = await readBodyWithin(upstream, MAX_ERROR_BODY_BYTES);
    text = read === 'too-large' ? '' : read;
  } catch (error) {
    text = '';
    logBrokenErrorBody(upstream.status, error, context);
  }
  return responseOf(
    upstreamErrorAnswer(
      upstream.status,
      (name) => upstream.headers.get(name) ?? undefined,
      text,
      context,
    ),
  );
}

/** What mapping an upstream error needs of the proxy. */
export interface UpstreamErrorContext {
  readonly redact: Redactor;
  readonly logger: ProxyLogger;
  readonly logContent: boolean;
}

/** Logs that an error body could not be read; the status alone still says what happened. */
export function logBrokenErrorBody(
  status: number,
  error: unknown,
  context: UpstreamErrorContext,
): void {
  context.logger(
    `Airlock proxy: reading an upstream HTTP ${status} error body failed (${errorName(error)}).`,
  );
}

/**
 * The page's answer to an upstream error of `status`, whose body read `text` (read up to
 * {@link MAX_ERROR_BODY_BYTES}; `''` past it) and whose headers `header` looks up.
 */
export function upstreamErrorAnswer(
  status: number,
  header: (name: string) => string | undefined,
  text: string,
  context: UpstreamErrorContext,
): ProxyAnswer {
  const { code, param } = identifiersOf(text);
  context.logger(
    `Airlock proxy: the upstream answered HTTP ${status}${code ? ` (${code})` : ''}` +
      (context.logContent && text !== '' ? `: ${context.redact(text)}` : '.'),
  );
  const headers: Record<string, string> = {};
  for (const name of RETRY_HEADERS) {
    const value = header(name);
    if (value !== undefined) headers[name] = value;
  }
  // `HTTP 400, context_length_exceeded`: the status, and the provider's code when it is a plain identifier.
  const said = code ? `HTTP ${status}, ${code}` : `HTTP ${status}`;
  const options = param === undefined ? { headers } : { headers, param };
  if (status === 401 || status === 403) {
    // The server's key was refused, not the page's request: a 401 would send the page looking for its own credentials.
    return errorAnswer(
      502,
      'upstream_auth_failed',
      `The model proxy could not authenticate with its upstream (HTTP ${status}): check the API key configured on the server.`,
      options,
    );
  }
  if (status === 429) {
    return errorAnswer(
      429,
      'upstream_rate_limited',
      `The upstream is rate limiting this proxy (${said}); try again later.`,
      { ...options, retryable: true },
    );
  }
  if (status >= 500) {
    return errorAnswer(502, 'upstream_error', `The upstream failed (${said}).`, {
      ...options,
      retryable: true,
    });
  }
  return errorAnswer(
    status >= 400 && status < 500 ? status : 502,
    'upstream_error',
    `The upstream refused the request (${said}).`,
    // 408 and 409 are the upstream's to retry; the rest would only repeat.
    { ...options, retryable: status === 408 || status === 409 },
  );
}

/** The provider's `error.code` (or `type`) and `error.param`, when they are plain identifiers. */
function identifiersOf(text: string): { code: string | undefined; param: string | undefined } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { code: undefined, param: undefined };
  }
  const error =
    typeof parsed === 'object' && parsed !== null
      ? (parsed as { error?: unknown }).error
      : undefined;
  if (typeof error !== 'object' || error === null) return { code: undefined, param: undefined };
  const { code, type, param } = error as { code?: unknown; type?: unknown; param?: unknown };
  const identifier = (value: unknown): string | undefined =>
    typeof value === 'string' && IDENTIFIER.test(value) ? value : undefined;
  return { code: identifier(code) ?? identifier(type), param: identifier(param) };
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
