/**
 * The proxy's own answers when it does not relay a success: refusals and mapped upstream
 * errors, in OpenAI's error JSON shape, so the `openai` SDK on the page turns them into its
 * usual typed errors with a readable message.
 */

/** Why the proxy itself answered instead of relaying the upstream. */
export type ProxyErrorCode =
  /** No route at this path (or the route is not enabled in `paths`). */
  | 'not_found'
  /** A route, asked with the wrong method. */
  | 'method_not_allowed'
  /** A cross-origin browser request from an origin not in `allowedOrigins`. */
  | 'origin_not_allowed'
  /** `authorize` threw or broke its contract; nothing was forwarded. */
  | 'authorize_failed'
  | 'invalid_json'
  | 'body_unreadable'
  | 'body_too_large'
  /** A request field outside the route's allowlist, or a value the policy refuses (`store: true`, a built-in tool). */
  | 'field_not_allowed'
  /** A request field of the wrong type. */
  | 'invalid_field'
  /** Over a cap: `n`, tools, messages, a message's size. */
  | 'limit_exceeded'
  | 'model_not_allowed'
  /** The user's requests or tokens per minute are used up; `Retry-After` says for how long. */
  | 'rate_limited'
  /** The user's cost budget for the day is used up; `Retry-After` says until when. */
  | 'budget_exceeded'
  /** The counter store failed, so the limits could not be checked; nothing was forwarded. */
  | 'limits_unavailable'
  /** An MCP message naming a JSON-RPC method the server's policy does not allow. */
  | 'mcp_method_not_allowed'
  /** A `tools/call` of a tool outside the MCP server's `allowedTools`. */
  | 'mcp_tool_not_allowed'
  /** A JSON-RPC batch posted to an MCP route: one message per request. */
  | 'mcp_batch_not_allowed'
  /** An MCP server's answer passed the upstream's `maxResponseBytes`: refused, or cut where it was. */
  | 'mcp_response_too_large'
  | 'upstream_unreachable'
  | 'upstream_auth_failed'
  | 'upstream_rate_limited'
  /** Any other upstream error, or an upstream answer the proxy could not relay. */
  | 'upstream_error';

/** OpenAI's `{ error: { message, type, param, code } }`. */
export interface ProxyErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: 'invalid_request_error' | 'server_error';
    readonly param: string | null;
    readonly code: ProxyErrorCode;
  };
}

/** A JSON error response. */
export function errorResponse(
  status: number,
  code: ProxyErrorCode,
  message: string,
  options: {
    readonly param?: string | null;
    /** Headers to start from (`retry-after`, `allow`). */
    readonly headers?: Headers;
    /** Whether the SDK may retry it by itself; otherwise `x-should-retry: false`. Default: only `upstream_unreachable`. */
    readonly retryable?: boolean;
  } = {},
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
  // A refusal would only repeat: telling the SDK so spares the page its retries.
  if (!(options.retryable ?? code === 'upstream_unreachable'))
    headers.set('x-should-retry', 'false');
  return new Response(JSON.stringify(body), { status, headers });
}
