// What Airlock's proxy says about its own answers, shared by the proxy (which marks them)
// and the model layer in the agent worker (which reads the mark to type the error).

/**
 * The response header the proxy sets on every answer it made itself instead of relaying a
 * success: its value is the {@link ProxyErrorCode}. An upstream's own answer never carries
 * it, so the page can tell the proxy's refusal from the upstream's. Exposed through CORS.
 */
export const PROXY_ERROR_HEADER = 'x-airlock-proxy-error';

/** Why the proxy itself answered instead of relaying the upstream. */
export type ProxyErrorCode =
  /** No route at this path (or the route is not enabled in `paths`). */
  | 'not_found'
  /** A route, asked with the wrong method. */
  | 'method_not_allowed'
  /** A cross-origin browser request from an origin not in `allowedOrigins`. */
  | 'origin_not_allowed'
  /**
   * `authorize` answered with a `Response` of its own (status 400 or more): the app refused
   * the caller. Only in the header; the body is the app's.
   */
  | 'authorize_refused'
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
  /**
   * An MCP request whose `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` header does not
   * match its body (or whose 2026-07-28 envelope is missing or malformed).
   */
  | 'mcp_header_mismatch'
  /** An MCP server's answer passed the upstream's `maxResponseBytes`: refused, or cut where it was. */
  | 'mcp_response_too_large'
  /** The MCP server takes OAuth and this user has not authorised it (or the grant was refused): start `authorizeMcp`. */
  | 'mcp_auth_required'
  /** The proxy could not take part in an MCP server's OAuth (discovery, metadata, client identity, a token call). */
  | 'mcp_oauth_failed'
  | 'upstream_unreachable'
  | 'upstream_auth_failed'
  | 'upstream_rate_limited'
  /** Any other upstream error, or an upstream answer the proxy could not relay. */
  | 'upstream_error';
