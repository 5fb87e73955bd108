/**
 * Each user's grant for an MCP server, kept by the proxy: read (refreshed first when it has
 * run out by the proxy's clock), refreshed once when the server refuses it, and revoked at
 * sign-out. Keyed by server and user, so one user's tokens never go out with another's calls.
 */
import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  attempt,
  type ClientIdentity,
  cappedFetch,
  type KeptMetadata,
  McpOAuthError,
  parseClient,
  parseJson,
} from './mcp-oauth-client.js';
import type { ResolvedMcpOAuth } from './mcp-oauth-options.js';

/** One user's grant for one server, as stored. */
export interface StoredGrant {
  readonly accessToken: string;
  readonly refreshToken: string | undefined;
  /** When the access token runs out, in ms since the epoch by the proxy's clock; undefined when the server did not say. */
  readonly expiresAt: number | undefined;
  readonly client: ClientIdentity;
  readonly metadata: KeptMetadata;
  readonly resource: string | undefined;
}

/** Refresh this long before the server's own deadline, so a request does not arrive with a token that ends on the way. */
const EXPIRY_MARGIN_MS = 30_000;

/** The store key of a user's grant for a server. */
export function grantKey(serverName: string, userId: string): string {
  return `grant:${serverName}:${encodeURIComponent(userId)}`;
}

/** The grant built from a token answer. */
export function grantOf(
  tokens: OAuthTokens,
  rest: Pick<StoredGrant, 'client' | 'metadata' | 'resource'>,
  now: number,
): StoredGrant {
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    expiresAt: tokens.expires_in === undefined ? undefined : now + tokens.expires_in * 1000,
    client: rest.client,
    metadata: rest.metadata,
    resource: rest.resource,
  };
}

/** A stored grant, checked; undefined when missing or malformed. */
export async function readGrant(
  oauth: ResolvedMcpOAuth,
  key: string,
): Promise<StoredGrant | undefined> {
  const value = parseJson(await oauth.store.get(key));
  const client = parseClient(JSON.stringify(value?.client ?? null));
  const metadata = value?.metadata as Record<string, unknown> | undefined;
  if (
    value === undefined ||
    typeof value.accessToken !== 'string' ||
    client === undefined ||
    typeof metadata?.token_endpoint !== 'string' ||
    typeof metadata.issuer !== 'string'
  ) {
    return undefined;
  }
  return {
    accessToken: value.accessToken,
    refreshToken: typeof value.refreshToken === 'string' ? value.refreshToken : undefined,
    expiresAt: typeof value.expiresAt === 'number' ? value.expiresAt : undefined,
    client,
    metadata: metadata as unknown as KeptMetadata,
    resource: typeof value.resource === 'string' ? value.resource : undefined,
  };
}

/**
 * Refreshes in flight in this process, by store and grant key: two requests that find a token
 * spent refresh it once. Per store, so two handlers with a server of the same name never share one.
 */
const refreshes = new WeakMap<object, Map<string, Promise<StoredGrant | undefined>>>();

/**
 * The user's grant with an access token that has not run out by the proxy's clock (refreshed
 * when it has), or undefined when the user has not authorised (or the refresh was refused).
 */
export async function currentGrant(
  oauth: ResolvedMcpOAuth,
  key: string,
  fetchFn: typeof fetch,
): Promise<StoredGrant | undefined> {
  const grant = await readGrant(oauth, key);
  if (grant === undefined) return undefined;
  if (grant.expiresAt === undefined || grant.expiresAt - EXPIRY_MARGIN_MS > oauth.now())
    return grant;
  return refreshGrant(oauth, key, grant.accessToken, fetchFn);
}

/**
 * Refreshes the grant whose access token `spent` was refused or ran out: once, however many
 * requests ask at the same time. Undefined when there is nothing to refresh with or the
 * authorization server refuses (the grant is then deleted: the user must authorise again).
 */
export function refreshGrant(
  oauth: ResolvedMcpOAuth,
  key: string,
  spent: string,
  fetchFn: typeof fetch,
): Promise<StoredGrant | undefined> {
  let refreshing = refreshes.get(oauth.store);
  if (refreshing === undefined) {
    refreshing = new Map();
    refreshes.set(oauth.store, refreshing);
  }
  const running = refreshing.get(key);
  if (running) return running;
  const refresh = (async () => {
    const grant = await readGrant(oauth, key);
    if (grant === undefined) return undefined;
    // Another request (or process) refreshed it already.
    if (grant.accessToken !== spent) return grant;
    if (grant.refreshToken === undefined) {
      await oauth.store.delete(key);
      return undefined;
    }
    let tokens: OAuthTokens;
    try {
      tokens = await refreshAuthorization(grant.metadata.issuer, {
        metadata: grant.metadata as OAuthMetadata,
        clientInformation: grant.client,
        refreshToken: grant.refreshToken,
        ...(grant.resource === undefined ? {} : { resource: new URL(grant.resource) }),
        fetchFn: cappedFetch(fetchFn, oauth.maxMetadataBytes),
      });
    } catch (error) {
      if (error instanceof OAuthError) {
        // Refused (invalid_grant: revoked, expired): the grant is of no use any more.
        await oauth.store.delete(key);
        return undefined;
      }
      throw new McpOAuthError(
        'its authorization server could not be reached to refresh the token.',
        {
          cause: error,
        },
      );
    }
    const fresh = grantOf(tokens, grant, oauth.now());
    await oauth.store.set(key, JSON.stringify(fresh));
    return fresh;
  })();
  const inFlight = refreshing;
  inFlight.set(key, refresh);
  return refresh.finally(() => inFlight.delete(key));
}

/**
 * Signs the user out of the server: revokes the refresh token and the access token at the
 * authorization server (RFC 7009) when it has a revocation endpoint, and deletes the grant
 * whatever it answers. Returns whether the server was asked to revoke.
 */
export async function revokeGrant(
  oauth: ResolvedMcpOAuth,
  key: string,
  fetchFn: typeof fetch,
): Promise<boolean> {
  const grant = await readGrant(oauth, key);
  await oauth.store.delete(key);
  const endpoint = grant?.metadata.revocation_endpoint;
  if (grant === undefined || endpoint === undefined) return false;
  const tokens = [
    ...(grant.refreshToken === undefined ? [] : [[grant.refreshToken, 'refresh_token'] as const]),
    [grant.accessToken, 'access_token'] as const,
  ];
  for (const [token, hint] of tokens) {
    const body = new URLSearchParams({
      token,
      token_type_hint: hint,
      client_id: grant.client.client_id,
    });
    if (grant.client.client_secret !== undefined)
      body.set('client_secret', grant.client.client_secret);
    await attempt(async () => {
      const answer = await cappedFetch(fetchFn, oauth.maxMetadataBytes)(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body,
        redirect: 'error',
      });
      if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
    }, 'its authorization server refused to revoke the token');
  }
  return true;
}
