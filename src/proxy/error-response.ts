/**
 * The proxy's own answers when it does not relay a success: refusals and mapped upstream
 * errors, in OpenAI's error JSON shape, so the `openai` SDK on the page turns them into its
 * usual typed errors with a readable message.
 */
import { PROXY_ERROR_HEADER, type ProxyErrorCode } from '../protocol/proxy-refusals.js';

export type { ProxyErrorCode };

/** OpenAI's `{ error: { message, type, param, code } }`. */
export interface ProxyErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: 'invalid_request_error' | 'server_error';
    readonly param: string | null;
    readonly code: ProxyErrorCode;
  };
}

/**
 * An answer of the proxy's own as plain data, the same for every transport: the Node shell
 * writes it to its `ServerResponse`, the Fetch-API shell makes a `Response` of it.
 */
export interface ProxyAnswer {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Record<string, string>;
  /** The JSON text of the body. */
  readonly body: string;
  /** The refusal's code; undefined for an answer that is not a refusal (a model list). */
  readonly code: ProxyErrorCode | undefined;
  /** The refusal's message, for the operator's log line. */
  readonly message: string | undefined;
}

/** The options of {@link errorAnswer} and {@link errorResponse}. */
interface ErrorOptions<H> {
  readonly param?: string | null;
  /** Headers to start from (`retry-after`, `allow`). */
  readonly headers?: H;
  /** Whether the SDK may retry it by itself; otherwise `x-should-retry: false`. Default: only `upstream_unreachable`. */
  readonly retryable?: boolean;
}

/** A JSON error answer, as plain data. */
export function errorAnswer(
  status: number,
  code: ProxyErrorCode,
  message: string,
  options: ErrorOptions<Readonly<Record<string, string>>> = {},
): ProxyAnswer {
  const body: ProxyErrorBody = {
    error: {
      message,
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      param: options.param ?? null,
      code,
    },
  };
  const headers: Record<string, string> = { ...options.headers };
  headers['content-type'] = 'application/json';
  // Marks the answer as the proxy's own, so the page tells it from the upstream's (a 401 of the
  // upstream never reaches the page as such; one of the app's `authorize` does).
  headers[PROXY_ERROR_HEADER] = code;
  // A refusal would only repeat: telling the SDK so spares the page its retries.
  if (!(options.retryable ?? code === 'upstream_unreachable')) headers['x-should-retry'] = 'false';
  return { status, headers, body: JSON.stringify(body), code, message };
}

/** The message of each answer made by {@link responseOf}, for the operator's log line. */
const messages = new WeakMap<Response, string>();

/** A Fetch-API `Response` of `answer`. */
export function responseOf(answer: ProxyAnswer): Response {
  const response = new Response(answer.body, {
    status: answer.status,
    headers: new Headers(answer.headers),
  });
  if (answer.message !== undefined) messages.set(response, answer.message);
  return response;
}

/** A JSON error response. */
export function errorResponse(
  status: number,
  code: ProxyErrorCode,
  message: string,
  options: ErrorOptions<Headers> = {},
): Response {
  const { headers, ...rest } = options;
  return responseOf(
    errorAnswer(status, code, message, {
      ...rest,
      ...(headers === undefined ? {} : { headers: Object.fromEntries(headers) }),
    }),
  );
}

/** The message {@link errorResponse} gave `response`; undefined for an answer it did not make. */
export function proxyErrorMessageOf(response: Response): string | undefined {
  return messages.get(response);
}

/**
 * The app's `authorize` refused the caller with a `Response` of its own: marked
 * `authorize_refused` (unless the app marked it), so the page reports the proxy's refusal and
 * not a refused key. Statuses below 400 are left as they are.
 */
export function markAuthorizeRefusal(response: Response): Response {
  if (response.status >= 400 && !response.headers.has(PROXY_ERROR_HEADER)) {
    response.headers.set(PROXY_ERROR_HEADER, 'authorize_refused');
  }
  return response;
}

/** The code of an answer the proxy made itself, or undefined for a relayed success. */
export function proxyErrorCodeOf(response: Response): ProxyErrorCode | undefined {
  const code = response.headers.get(PROXY_ERROR_HEADER);
  return code === null ? undefined : (code as ProxyErrorCode);
}
