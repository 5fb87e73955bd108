// What the proxy's MCP OAuth callback page tells the page that opened it. Shared by the proxy,
// which posts it, and the page's `authorizeMcp`, which waits for it; it never carries a token.

/** The `type` of the callback page's message. */
export const MCP_OAUTH_MESSAGE = 'airlock-mcp-oauth';

/** The message the callback page posts to its opener (or parent frame), targeted at the page's origin. */
export interface McpOAuthMessage {
  readonly type: typeof MCP_OAUTH_MESSAGE;
  /** The MCP server's name in the proxy's options. */
  readonly server: string;
  /** `done`: the proxy holds the user's tokens now; `failed`: it does not (the page's sentence says why). */
  readonly outcome: 'done' | 'failed';
}

/**
 * Redirect mode: the fragment parameter the proxy's callback adds to the page's `returnTo`
 * (`#airlock-mcp-oauth=done&airlock-mcp-server=<name>`). A hint that the flow came back, never
 * proof: `completeMcpAuthorization` asks the proxy's `status` route. It carries no token or code.
 */
export const MCP_OAUTH_RETURN_PARAM = 'airlock-mcp-oauth';

/** The fragment parameter naming the server, beside {@link MCP_OAUTH_RETURN_PARAM}. */
export const MCP_OAUTH_RETURN_SERVER_PARAM = 'airlock-mcp-server';

/** What the proxy's `status` route answers: whether it holds a grant of the calling user's for the server. */
export interface McpOAuthStatus {
  readonly authorized: boolean;
}
