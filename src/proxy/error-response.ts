/**
 * The proxy's own refusals, in OpenAI's error JSON shape, so the `openai` SDK on the
 * page turns them into its usual typed errors with a readable message.
 */

/** Why the proxy itself answered instead of the upstream. */
export type ProxyErrorCode =
  | 'forbidden_path'
  | 'origin_not_allowed'
  | 'invalid_json'
  | 'body_unreadable'
  | 'model_not_allowed'
  | 'body_too_large'
  | 'upstream_unreachable'
  | 'upstream_auth_failed';

/** OpenAI's `{ error: { message, type, param, code } }`. */
export interface ProxyErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: 'invalid_request_error' | 'server_error';
    readonly param: string | null;
    readonly code: ProxyErrorCode;
  };
}

/** A JSON error response; `headers` adds CORS and the like. */
export function errorResponse(
  status: number,
  code: ProxyErrorCode,
  message: string,
  options: { readonly param?: string; readonly headers?: Headers } = {},
): Response {
  const body: ProxyErrorBody = {
    error: {
      message,
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      param: options.param ?? null,
      code,
    },
  };
  const headers = new Headers(options.headers);
  headers.set('content-type', 'application/json');
  // Only an unreachable upstream may recover by itself; any other refusal would just repeat.
  if (code !== 'upstream_unreachable') headers.set('x-should-retry', 'false');
  return new Response(JSON.stringify(body), { status, headers });
}
