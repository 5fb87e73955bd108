/**
 * The page's side of MCP OAuth held by the proxy (docs/mcp.md#oauth):
 * `import { authorizeMcp, signOutMcp } from 'airlock-agents/mcp-auth'`. An entry of its own,
 * so the page entry stays within its size budget and apps without MCP OAuth ship none of it.
 */

export type {
  McpAuthorizationOptions,
  McpProxyCallOptions,
  McpRedirectAuthorizationOptions,
} from './page/mcp-authorization';
export { authorizeMcp, signOutMcp } from './page/mcp-authorization';
export type { McpAuthorizationResult } from './page/mcp-authorization-return';
export { completeMcpAuthorization } from './page/mcp-authorization-return';
export type { McpOAuthMessage, McpOAuthStatus } from './protocol/mcp-oauth';
