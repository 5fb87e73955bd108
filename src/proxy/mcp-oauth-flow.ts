/**
 * The OAuth routes of an MCP upstream, under `<mcpPath>/<name>/oauth/`: `start` (the page
 * asks; the proxy discovers, picks its client identity, makes the PKCE pair and a `state`
 * kept server-side, and answers the authorization URL), `callback` (the authorization server
 * sends the user's browser back with a code; the proxy exchanges it, keeps the tokens for the
 * user who started, and answers a small page that tells its opener "done", or in redirect
 * mode sends the browser back to the page's `returnTo`), `sign-out`, `status` (whether the
 * proxy holds the caller's grant: what the end of a redirect asks rather than trust its URL),
 * and `client-metadata.json` (the Client ID Metadata Document). The page never holds a token,
 * a verifier or a client secret: only the server's name and the authorization URL.
 */
import {
  exchangeAuthorization,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { MCP_OAUTH_MESSAGE } from '../protocol/mcp-oauth.js';
import { randomId } from '../runtime/random-id.js';
import { type ProxyCaller, runAuthorize } from './authorize.js';
import { errorResponse, markAuthorizeRefusal } from './error-response.js';
import {
  attempt,
  cappedFetch,
  clientMetadata,
  discover,
  identifyClient,
  type KeptMetadata,
  McpOAuthError,
  parseClient,
  parseJson,
} from './mcp-oauth-client.js';
import type { ResolvedMcpOAuth } from './mcp-oauth-options.js';
import { readReturnTo, returnRedirect } from './mcp-oauth-return.js';
import { grantKey, grantOf, readGrant, revokeGrant } from './mcp-oauth-tokens.js';
import type { ResolvedProxyOptions } from './proxy-options.js';

/** The sub-paths served under `<mcpPath>/<name>/oauth/`. */
export const MCP_OAUTH_ACTIONS = [
  'start',
  'callback',
  'sign-out',
  'status',
  'client-metadata.json',
] as const;

/** One of {@link MCP_OAUTH_ACTIONS}. */
export type McpOAuthAction = (typeof MCP_OAUTH_ACTIONS)[number];

/** Whether a path segment names an OAuth route. */
export function isOAuthAction(action: string | undefined): action is McpOAuthAction {
  return (MCP_OAUTH_ACTIONS as readonly (string | undefined)[]).includes(action);
}

/** What an OAuth route needs to know of its server. */
export interface McpOAuthRoute {
  readonly name: string;
  readonly url: string;
  readonly oauth: ResolvedMcpOAuth;
}

/** Longest `code` and `state` read from a callback: real ones are far shorter. */
const MAX_PARAM_CHARS = 2048;

/** Answers one OAuth route of an MCP server. */
export async function answerMcpOAuth(
  request: Request,
  route: McpOAuthRoute,
  action: McpOAuthAction,
  config: ResolvedProxyOptions,
  admit: (caller: ProxyCaller) => Promise<Response | undefined>,
): Promise<Response> {
  const method = action === 'start' || action === 'sign-out' ? 'POST' : 'GET';
  if (request.method !== method) {
    return errorResponse(405, 'method_not_allowed', `This route takes ${method}.`, {
      headers: new Headers({ allow: method }),
    });
  }
  // The metadata document is public: the authorization server fetches it, as nobody.
  if (action === 'client-metadata.json') return clientDocument(request, route, config);
  const authorized = await runAuthorize(config.authorize, request);
  if (authorized.kind === 'response') return markAuthorizeRefusal(authorized.response);
  if (authorized.kind === 'failed') {
    config.logger(`Airlock proxy: ${authorized.reason}; the request was refused.`);
    return errorResponse(500, 'authorize_failed', 'The proxy could not check who is calling.');
  }
  const caller = authorized.caller;
  // Counted as one request of the caller's, as the MCP route's are: a start costs discovery.
  const refusal = await admit(caller);
  if (refusal) return refusal;
  try {
    if (action === 'start') return await start(request, route, caller, config);
    if (action === 'sign-out') return await signOut(route, caller, config);
    if (action === 'status') return await status(route, caller);
    return await callback(request, route, caller, config);
  } catch (error) {
    if (!(error instanceof McpOAuthError)) throw error;
    config.logger(
      `Airlock proxy: OAuth with the MCP server "${route.name}" failed: ${error.message}`,
    );
    const message = `The proxy could not authorise with the MCP server "${route.name}": ${error.message}`;
    if (action === 'callback') return resultPage(route.name, 'failed', undefined, message, 502);
    return errorResponse(502, 'mcp_oauth_failed', message, { param: route.name });
  }
}

/** The origin browsers reach the proxy at, for the callback and the metadata document. */
function publicOrigin(request: Request, oauth: ResolvedMcpOAuth): string {
  return oauth.publicOrigin ?? new URL(request.url).origin;
}

function routeUrl(
  request: Request,
  route: McpOAuthRoute,
  config: ResolvedProxyOptions,
  action: McpOAuthAction,
): string {
  return `${publicOrigin(request, route.oauth)}${config.mcpPath}/${route.name}/oauth/${action}`;
}

function clientDocument(
  request: Request,
  route: McpOAuthRoute,
  config: ResolvedProxyOptions,
): Response {
  const document = {
    client_id: routeUrl(request, route, config, 'client-metadata.json'),
    ...clientMetadata(route.oauth, routeUrl(request, route, config, 'callback')),
  };
  return Response.json(document, { headers: { 'cache-control': 'max-age=300' } });
}

/** A pending authorization, kept under its `state` until the callback takes it (once). */
interface PendingAuthorization {
  readonly server: string;
  readonly userId: string;
  readonly verifier: string;
  readonly redirectUri: string;
  readonly client: { client_id: string; client_secret?: string | undefined };
  readonly metadata: KeptMetadata;
  readonly resource: string | undefined;
  /** Where the callback page posts its word: the page that started, or the proxy itself. */
  readonly openerOrigin: string;
  /** Redirect mode: where the callback sends the browser back (checked by `readReturnTo`). */
  readonly returnTo?: string;
  readonly expiresAt: number;
}

const stateKey = (state: string): string => `state:${state}`;

async function start(
  request: Request,
  route: McpOAuthRoute,
  caller: ProxyCaller,
  config: ResolvedProxyOptions,
): Promise<Response> {
  const { oauth } = route;
  const asked = await readReturnTo(request, config, publicOrigin(request, oauth));
  if (asked instanceof Response) return asked;
  const discovered = await discover(route.url, oauth, config.fetch);
  const redirectUri = routeUrl(request, route, config, 'callback');
  const client = await identifyClient(
    {
      serverName: route.name,
      oauth,
      metadataUrl:
        oauth.clientMetadataUrl ?? routeUrl(request, route, config, 'client-metadata.json'),
      redirectUri,
      fetch: config.fetch,
    },
    discovered,
  );
  const state = randomId('state');
  const { authorizationUrl, codeVerifier } = await attempt(
    () =>
      startAuthorization(discovered.metadata.issuer, {
        metadata: discovered.metadata as OAuthMetadata,
        clientInformation: client,
        redirectUrl: redirectUri,
        state,
        ...(discovered.scope === undefined ? {} : { scope: discovered.scope }),
        ...(discovered.resource === undefined ? {} : { resource: new URL(discovered.resource) }),
      }),
    'its authorization server cannot run the authorization code flow',
  );
  if (discovered.resource !== undefined) {
    // The metadata's own spelling of the resource, as the token request will send it.
    authorizationUrl.searchParams.set('resource', discovered.resource);
  }
  const pending: PendingAuthorization = {
    server: route.name,
    userId: caller.userId,
    verifier: codeVerifier,
    redirectUri,
    client,
    metadata: discovered.metadata,
    resource: discovered.resource,
    openerOrigin: originOf(request.headers.get('origin')) ?? publicOrigin(request, oauth),
    ...(asked.returnTo === undefined ? {} : { returnTo: asked.returnTo }),
    expiresAt: oauth.now() + oauth.stateTtlMs,
  };
  await oauth.store.set(stateKey(state), JSON.stringify(pending), oauth.stateTtlMs);
  return Response.json(
    { authorizationUrl: authorizationUrl.href },
    { headers: { 'cache-control': 'no-store' } },
  );
}

async function callback(
  request: Request,
  route: McpOAuthRoute,
  caller: ProxyCaller,
  config: ResolvedProxyOptions,
): Promise<Response> {
  const { oauth } = route;
  const params = new URL(request.url).searchParams;
  const state = params.get('state') ?? '';
  const refuse = (why: string, status = 400, openerOrigin?: string) =>
    resultPage(
      route.name,
      'failed',
      openerOrigin,
      `Authorisation with "${route.name}" failed: ${why}`,
      status,
    );
  if (state === '' || state.length > MAX_PARAM_CHARS)
    return refuse('the callback carries no valid state.');
  // Taken, not read: a state is used once, whoever brings it and whatever follows.
  const pending = parsePending(await oauth.store.take(stateKey(state)));
  if (pending === undefined || pending.server !== route.name || pending.expiresAt <= oauth.now()) {
    return refuse('this authorisation is unknown, used or expired: start again.');
  }
  if (pending.userId !== caller.userId) {
    config.logger(
      `Airlock proxy: an OAuth callback for "${route.name}" came from another user than the one who started it; refused.`,
    );
    return refuse('it was started by another user.', 403);
  }
  // From here the flow is known: a redirect-mode one goes back to its page, whatever the outcome.
  const fail = (why: string, status: number) =>
    pending.returnTo === undefined
      ? refuse(why, status, pending.openerOrigin)
      : returnRedirect(pending.returnTo, route.name, 'failed');
  const denied = params.get('error');
  if (denied !== null) return fail('the authorization server did not grant it.', 403);
  const code = params.get('code') ?? '';
  if (code === '' || code.length > MAX_PARAM_CHARS)
    return fail('the callback carries no code.', 400);
  let tokens: OAuthTokens;
  try {
    tokens = await exchangeAuthorization(pending.metadata.issuer, {
      metadata: pending.metadata as OAuthMetadata,
      clientInformation: pending.client,
      authorizationCode: code,
      codeVerifier: pending.verifier,
      redirectUri: pending.redirectUri,
      ...(pending.resource === undefined ? {} : { resource: new URL(pending.resource) }),
      fetchFn: cappedFetch(config.fetch, oauth.maxMetadataBytes),
    });
  } catch (error) {
    config.logger(
      `Airlock proxy: the authorization server of "${route.name}" refused the code (${error instanceof Error ? error.name : typeof error}).`,
    );
    return fail('the authorization server refused the code.', 502);
  }
  const grant = grantOf(
    tokens,
    { client: pending.client, metadata: pending.metadata, resource: pending.resource },
    oauth.now(),
  );
  await oauth.store.set(grantKey(route.name, caller.userId), JSON.stringify(grant));
  if (pending.returnTo !== undefined) return returnRedirect(pending.returnTo, route.name, 'done');
  return resultPage(
    route.name,
    'done',
    pending.openerOrigin,
    `Signed in to "${route.name}". You can close this window.`,
    200,
  );
}

async function signOut(
  route: McpOAuthRoute,
  caller: ProxyCaller,
  config: ResolvedProxyOptions,
): Promise<Response> {
  const revoked = await revokeGrant(route.oauth, grantKey(route.name, caller.userId), config.fetch);
  return Response.json({ signedOut: true, revoked }, { headers: { 'cache-control': 'no-store' } });
}

/** Whether the proxy holds the caller's grant: a yes or no, never the grant. */
async function status(route: McpOAuthRoute, caller: ProxyCaller): Promise<Response> {
  const grant = await readGrant(route.oauth, grantKey(route.name, caller.userId));
  return Response.json(
    { authorized: grant !== undefined },
    { headers: { 'cache-control': 'no-store' } },
  );
}

function parsePending(text: string | undefined): PendingAuthorization | undefined {
  const value = parseJson(text);
  const client = parseClient(JSON.stringify(value?.client ?? null));
  const metadata = value?.metadata as Record<string, unknown> | undefined;
  const strings = ['server', 'userId', 'verifier', 'redirectUri', 'openerOrigin'] as const;
  if (
    value === undefined ||
    client === undefined ||
    strings.some((field) => typeof value[field] !== 'string') ||
    typeof value.expiresAt !== 'number' ||
    (value.returnTo !== undefined && typeof value.returnTo !== 'string') ||
    typeof metadata?.issuer !== 'string' ||
    typeof metadata.token_endpoint !== 'string'
  ) {
    return undefined;
  }
  return { ...(value as unknown as PendingAuthorization), client };
}

/**
 * The page the popup (or frame) ends on: a sentence, and a script that posts
 * `{ type, server, outcome }` to the page that started, with that page's origin as the
 * target, so no other page reads it. It carries no token. An unknown state has no known
 * opener: nothing is posted then, and the page's wait ends at its deadline.
 */
function resultPage(
  server: string,
  outcome: 'done' | 'failed',
  openerOrigin: string | undefined,
  sentence: string,
  status: number,
): Response {
  const nonce = randomId('n');
  const message = { type: MCP_OAUTH_MESSAGE, server, outcome };
  const script =
    openerOrigin === undefined
      ? ''
      : `<script nonce="${nonce}">(function(){var t=window.opener||(window.parent!==window?window.parent:null);if(t)t.postMessage(${scriptJson(message)},${scriptJson(openerOrigin)});if(window.opener)window.close();})();</script>`;
  const html = `<!doctype html><meta charset="utf-8"><title>${escapeHtml(server)}</title><p>${escapeHtml(sentence)}</p>${script}`;
  return new Response(html, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; frame-ancestors ${openerOrigin ?? "'none'"}`,
      'x-content-type-options': 'nosniff',
    },
  });
}

/** An `Origin` header as an origin, or undefined: it goes into the callback page's CSP, so nothing else may. */
function originOf(header: string | null): string | undefined {
  if (header === null) return undefined;
  try {
    const { origin, protocol } = new URL(header);
    return protocol === 'https:' || protocol === 'http:' ? origin : undefined;
  } catch {
    return undefined;
  }
}

/** JSON that cannot end a `<script>` element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028|\u2029/g, '');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
