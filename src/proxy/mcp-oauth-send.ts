/**
 * An MCP request of a user, sent with that user's access token: refreshed first when it has
 * run out by the proxy's clock, refreshed once more and sent again when the server answers
 * 401. A user with no grant gets the proxy's 401 `mcp_auth_required` naming the server, and
 * never anyone else's token. The tokens are added to what the answer is blanked of.
 */
import type { ProxyCaller } from './authorize.js';
import { errorResponse } from './error-response.js';
import { McpOAuthError } from './mcp-oauth-client.js';
import type { ResolvedMcpOAuth } from './mcp-oauth-options.js';
import { currentGrant, grantKey, refreshGrant, type StoredGrant } from './mcp-oauth-tokens.js';
import type { ResolvedMcpUpstream } from './mcp-upstreams.js';
import type { ResolvedProxyOptions } from './proxy-options.js';
import { createSecretsRedactor } from './redact-key.js';

/** The upstream's answer (or the proxy's refusal), and the upstream to relay it as: its redaction widened to the user's tokens. */
export interface GrantedAnswer {
  readonly answer: Response;
  upstream(base: ResolvedMcpUpstream): ResolvedMcpUpstream;
}

/** Sends with the user's grant; see the module comment. */
export async function sendWithGrant(
  name: string,
  oauth: ResolvedMcpOAuth,
  caller: ProxyCaller,
  send: (token: string) => Promise<Response>,
  config: ResolvedProxyOptions,
): Promise<GrantedAnswer> {
  const key = grantKey(name, caller.userId);
  const seen: string[] = [];
  const relayed = (answer: Response): GrantedAnswer => ({
    answer,
    upstream: (base) => {
      const tokens = createSecretsRedactor(seen);
      return { ...base, redact: (text) => tokens(base.redact(text)) };
    },
  });
  try {
    let grant: StoredGrant | undefined = await currentGrant(oauth, key, config.fetch);
    if (grant === undefined) return relayed(authRequired(name));
    remember(seen, grant);
    let answer = await send(grant.accessToken);
    if (answer.status !== 401) return relayed(answer);
    await answer.body?.cancel().catch(() => undefined);
    grant = await refreshGrant(oauth, key, grant.accessToken, config.fetch);
    if (grant === undefined) return relayed(authRequired(name));
    remember(seen, grant);
    answer = await send(grant.accessToken);
    if (answer.status !== 401) return relayed(answer);
    await answer.body?.cancel().catch(() => undefined);
    // Refused with a fresh token too: the grant is no use (revoked at the server, say).
    await oauth.store.delete(key);
    return relayed(authRequired(name));
  } catch (error) {
    if (!(error instanceof McpOAuthError)) throw error;
    config.logger(`Airlock proxy: OAuth with the MCP server "${name}" failed: ${error.message}`);
    return relayed(
      errorResponse(
        502,
        'mcp_oauth_failed',
        `The proxy could not authorise with the MCP server "${name}": ${error.message}`,
        {
          param: name,
        },
      ),
    );
  }
}

function remember(seen: string[], grant: StoredGrant): void {
  seen.push(grant.accessToken);
  if (grant.refreshToken !== undefined) seen.push(grant.refreshToken);
}

/** The proxy's 401 for a user who has not authorised the server: the page starts `authorizeMcp(name)`. */
function authRequired(name: string): Response {
  return errorResponse(
    401,
    'mcp_auth_required',
    `The MCP server "${name}" needs this user's authorisation: call authorizeMcp("${name}") on the page.`,
    { param: name },
  );
}
