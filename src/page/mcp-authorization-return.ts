/**
 * The end of MCP OAuth in redirect mode, on the page the proxy sent the browser back to: the
 * marker in the URL's fragment says that a flow came back, for which server; it is removed at
 * once, and the outcome is the proxy's word (its `status` route), never the URL's, which any
 * link can forge.
 */
import { AirlockError } from '../errors/airlock-error';
import {
  MCP_OAUTH_RETURN_PARAM,
  MCP_OAUTH_RETURN_SERVER_PARAM,
  type McpOAuthStatus,
} from '../protocol/mcp-oauth';
import {
  failure,
  type McpProxyCallOptions,
  proxyCall,
  routeBase,
  SERVER_NAME,
} from './mcp-authorization';

/** What {@link completeMcpAuthorization} found: the server the flow was for, and whether the proxy now holds the user's grant. */
export interface McpAuthorizationResult {
  readonly server: string;
  /** The proxy's answer, never the URL's: `false` after a denial, a failure or a forged marker. */
  readonly authorized: boolean;
}

/**
 * Call on the page `returnTo` named, as it loads: when its URL carries the proxy's marker it
 * removes the marker (`history.replaceState`, so a reload or a shared link does not repeat
 * it), asks the proxy whether it holds the user's grant for that server, and resolves with
 * the answer; without a marker it resolves `undefined`. Rejects `mcp-auth-failed`: reason
 * `marker-malformed` for a marker that names no valid server, or as `signOutMcp` does when
 * the proxy cannot answer.
 */
export async function completeMcpAuthorization(
  options: McpProxyCallOptions = {},
): Promise<McpAuthorizationResult | undefined> {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (!fragment.has(MCP_OAUTH_RETURN_PARAM)) return undefined;
  const server = fragment.get(MCP_OAUTH_RETURN_SERVER_PARAM) ?? '';
  fragment.delete(MCP_OAUTH_RETURN_PARAM);
  fragment.delete(MCP_OAUTH_RETURN_SERVER_PARAM);
  const rest = fragment.toString();
  history.replaceState(
    history.state,
    '',
    `${location.pathname}${location.search}${rest === '' ? '' : `#${rest}`}`,
  );
  if (!SERVER_NAME.test(server)) {
    throw new AirlockError('mcp-auth-failed', 'The URL carries a malformed authorization marker.', {
      details: { server: server.slice(0, 64), reason: 'marker-malformed' },
    });
  }
  const answer = await proxyCall(`${routeBase(server, options)}/status`, server, options, {
    method: 'GET',
  });
  const status = (await answer.json().catch(() => undefined)) as
    | Partial<McpOAuthStatus>
    | undefined;
  if (typeof status?.authorized !== 'boolean') {
    throw failure(
      server,
      'proxy-answer',
      'The proxy did not answer with the authorization status.',
    );
  }
  return { server, authorized: status.authorized };
}
