/**
 * The proxy as an MCP server's OAuth client: discovery (protected resource metadata, RFC 9728,
 * then authorization server metadata, RFC 8414), who the client is (a registered id, a Client
 * ID Metadata Document, or dynamic registration), and the token calls a page cannot make (CORS
 * forbids them, and the tokens must not reach it). The HTTP and PKCE work is the official
 * SDK's (`@modelcontextprotocol/sdk/client/auth.js`); this module adds what a server holding
 * many users' tokens needs on top: every document capped in size, the endpoints held to the
 * authorization server's origin, and nothing of an answer quoted back.
 */

import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  registerClient,
  selectResourceURL,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { ResolvedMcpOAuth } from './mcp-oauth-options.js';

/** Why the proxy could not take part in an MCP server's OAuth: a sentence of the proxy's own, never the server's text. */
export class McpOAuthError extends Error {
  override readonly name = 'McpOAuthError';
}

/** The authorization server metadata the proxy keeps: only the fields its calls read. */
export type KeptMetadata = Pick<
  OAuthMetadata,
  | 'issuer'
  | 'authorization_endpoint'
  | 'token_endpoint'
  | 'response_types_supported'
  | 'code_challenge_methods_supported'
  | 'token_endpoint_auth_methods_supported'
  | 'revocation_endpoint'
  | 'registration_endpoint'
> & { readonly client_id_metadata_document_supported?: boolean | undefined };

/** What discovery found for one MCP server. */
export interface Discovered {
  readonly metadata: KeptMetadata;
  /** The RFC 8707 resource indicator, as the server's metadata spells it. */
  readonly resource: string | undefined;
  /** The scopes to ask for. */
  readonly scope: string | undefined;
}

/** A client the authorization server knows the proxy by. */
export interface ClientIdentity {
  readonly client_id: string;
  readonly client_secret?: string | undefined;
}

/** A fetch that refuses any answer body over `maxBytes` (a huge metadata document, a flood of a token answer). */
export function cappedFetch(base: typeof fetch, maxBytes: number): typeof fetch {
  return async (input, init) => {
    const answer = await base(input, init);
    const declared = Number(answer.headers.get('content-length') ?? '0');
    if (declared > maxBytes) {
      await answer.body?.cancel().catch(() => undefined);
      throw new McpOAuthError(`An authorization document passed ${maxBytes} bytes.`);
    }
    const reader = answer.body?.getReader();
    const parts: Uint8Array[] = [];
    let size = 0;
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new McpOAuthError(`An authorization document passed ${maxBytes} bytes.`);
      }
      parts.push(value);
    }
    const body = new Uint8Array(size);
    let at = 0;
    for (const part of parts) {
      body.set(part, at);
      at += part.byteLength;
    }
    const nullBody =
      answer.status === 204 ||
      answer.status === 304 ||
      (answer.status >= 300 && answer.status < 400 && size === 0);
    return new Response(nullBody ? null : body, {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
  };
}

/** Finds the authorization server of `serverUrl` and checks its metadata; throws {@link McpOAuthError}. */
export async function discover(
  serverUrl: string,
  oauth: ResolvedMcpOAuth,
  fetchFn: typeof fetch,
): Promise<Discovered> {
  const fetchCapped = cappedFetch(fetchFn, oauth.maxMetadataBytes);
  const resourceMetadata = await attempt(
    () => discoverOAuthProtectedResourceMetadata(serverUrl, undefined, fetchCapped),
    'its protected resource metadata could not be read',
  );
  const server = resourceMetadata.authorization_servers?.[0];
  if (server === undefined) {
    throw new McpOAuthError('its protected resource metadata names no authorization server.');
  }
  const found = await attempt(
    () => discoverAuthorizationServerMetadata(server, { fetchFn: fetchCapped }),
    'its authorization server metadata could not be read',
  );
  if (found === undefined) {
    throw new McpOAuthError('its authorization server publishes no metadata.');
  }
  const metadata = found as OAuthMetadata & { client_id_metadata_document_supported?: boolean };
  checkOrigins(server, metadata, oauth.trustedOrigins);
  if (!metadata.code_challenge_methods_supported?.includes('S256')) {
    // MCP: a client must refuse an authorization server that does not say it supports S256.
    throw new McpOAuthError('its authorization server does not offer PKCE with S256.');
  }
  const resource = await attempt(
    () => selectResourceURL(serverUrl, {} as OAuthClientProvider, resourceMetadata),
    'its protected resource metadata names another resource',
  );
  const scopes = oauth.scopes ?? resourceMetadata.scopes_supported ?? [];
  return {
    metadata: {
      issuer: metadata.issuer,
      authorization_endpoint: metadata.authorization_endpoint,
      token_endpoint: metadata.token_endpoint,
      response_types_supported: metadata.response_types_supported,
      code_challenge_methods_supported: metadata.code_challenge_methods_supported,
      token_endpoint_auth_methods_supported: metadata.token_endpoint_auth_methods_supported,
      revocation_endpoint: metadata.revocation_endpoint,
      registration_endpoint: metadata.registration_endpoint,
      client_id_metadata_document_supported: metadata.client_id_metadata_document_supported,
    },
    // The metadata's own spelling: the SDK's URL would add a trailing slash (#1968 there).
    resource: resource === undefined ? undefined : resourceMetadata.resource,
    scope: scopes.length === 0 ? undefined : scopes.join(' '),
  };
}

/**
 * The endpoints a code, a verifier, a refresh token or a client secret is sent to must be on
 * the authorization server's own origin (or one the app trusts): metadata is fetched from the
 * network, and a server that names another host would have the proxy post them there.
 */
function checkOrigins(server: string, metadata: OAuthMetadata, trusted: ReadonlySet<string>): void {
  const own = new URL(server).origin;
  const endpoints = {
    issuer: metadata.issuer,
    authorization_endpoint: metadata.authorization_endpoint,
    token_endpoint: metadata.token_endpoint,
    revocation_endpoint: metadata.revocation_endpoint,
    registration_endpoint: metadata.registration_endpoint,
  };
  for (const [field, value] of Object.entries(endpoints)) {
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new McpOAuthError(`its authorization server's ${field} is not a URL.`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new McpOAuthError(`its authorization server's ${field} is not an http(s) URL.`);
    }
    if (url.origin !== own && !trusted.has(url.origin)) {
      throw new McpOAuthError(
        `its authorization server's ${field} is on ${url.origin}, not on ${own}: add it to \`trustedOrigins\` if that is right.`,
      );
    }
  }
}

/**
 * Who the proxy is to the authorization server, in the order MCP recommends: a client id
 * registered beforehand, else a Client ID Metadata Document (its URL is the id), else one
 * registered dynamically (RFC 7591), kept in the store so it is registered once.
 */
export async function identifyClient(
  context: {
    readonly serverName: string;
    readonly oauth: ResolvedMcpOAuth;
    readonly metadataUrl: string;
    readonly redirectUri: string;
    readonly fetch: typeof fetch;
  },
  discovered: Discovered,
): Promise<ClientIdentity> {
  const { oauth } = context;
  if (oauth.clientId !== undefined) {
    return { client_id: oauth.clientId, client_secret: oauth.clientSecret };
  }
  if (discovered.metadata.client_id_metadata_document_supported === true) {
    return { client_id: context.metadataUrl };
  }
  if (discovered.metadata.registration_endpoint === undefined) {
    throw new McpOAuthError(
      'its authorization server takes neither Client ID Metadata Documents nor dynamic registration: give `clientId`.',
    );
  }
  const key = `client:${context.serverName}:${discovered.metadata.issuer}:${context.redirectUri}`;
  const kept = parseClient(await context.oauth.store.get(key));
  if (kept) return kept;
  const registered = await attempt(
    () =>
      registerClient(discovered.metadata.issuer, {
        metadata: discovered.metadata as OAuthMetadata,
        clientMetadata: clientMetadata(oauth, context.redirectUri),
        ...(discovered.scope === undefined ? {} : { scope: discovered.scope }),
        fetchFn: cappedFetch(context.fetch, oauth.maxMetadataBytes),
      }),
    'its authorization server refused to register the proxy',
  );
  const identity: ClientIdentity = {
    client_id: registered.client_id,
    client_secret: registered.client_secret,
  };
  await oauth.store.set(key, JSON.stringify(identity));
  return identity;
}

/** The client's metadata: the Client ID Metadata Document's body, and what dynamic registration sends. */
export function clientMetadata(oauth: ResolvedMcpOAuth, redirectUri: string) {
  return {
    client_name: oauth.clientName,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** A stored client identity, checked: stored rows are data, not trusted types. */
export function parseClient(text: string | undefined): ClientIdentity | undefined {
  const value = parseJson(text);
  if (typeof value?.client_id !== 'string') return undefined;
  const secret = value.client_secret;
  return {
    client_id: value.client_id,
    client_secret: typeof secret === 'string' ? secret : undefined,
  };
}

/** A JSON object, or undefined for anything else. */
export function parseJson(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Runs an SDK call; any failure becomes an {@link McpOAuthError} with the proxy's sentence (the SDK's quotes bodies). */
export async function attempt<T>(call: () => Promise<T>, failure: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof McpOAuthError) throw error;
    throw new McpOAuthError(`${failure}.`, { cause: error });
  }
}
