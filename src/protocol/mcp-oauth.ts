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
