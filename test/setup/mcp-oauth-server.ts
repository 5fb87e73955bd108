import { randomBytes } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  InvalidGrantError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from '@modelcontextprotocol/sdk/server/auth/provider.js';
import {
  createOAuthMetadata,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import express, { type Response as ExpressResponse } from 'express';

/**
 * A real MCP server with OAuth, built from the official SDK's server side: `mcpAuthRouter`
 * (authorization server metadata, `/authorize`, `/token`, `/register`, `/revoke`, protected
 * resource metadata) over {@link TestOAuthProvider}, and `requireBearerAuth` on its MCP
 * endpoint (`/mcp`, stateless Streamable HTTP). Consent is automatic: `/authorize` redirects
 * at once with a code for the user named by the `x-test-user` header (default `mcp-user`), so
 * a test (or a popup) that follows the authorization URL gets the callback URL back.
 *
 * Tests read what it issued and saw at `GET /control/log` and expire every access token with
 * `POST /control/expire-access`.
 */
export interface McpOAuthServer {
  /** Origin, no trailing slash. */
  readonly url: string;
  /** The MCP endpoint, `<url>/mcp`. */
  readonly mcpUrl: string;
  readonly provider: TestOAuthProvider;
  close(): Promise<void>;
}

/** How a test wants the authorization server to behave. */
export interface McpOAuthServerOptions {
  /** Advertise and accept Client ID Metadata Documents (a URL as `client_id`). Default true. */
  readonly clientIdMetadataDocuments?: boolean;
  /** Serve `/register` (dynamic client registration). Default true. */
  readonly dynamicRegistration?: boolean;
  /** Seconds an access token lives (`expires_in`). Default 3600. */
  readonly accessTokenSeconds?: number;
  /** Rewrites the authorization server metadata before it is served (hostile servers). */
  readonly metadata?: (metadata: Record<string, unknown>) => unknown;
  /** Serves this text as the authorization server metadata instead (a huge document). */
  readonly rawMetadata?: string;
}

interface IssuedToken {
  readonly user: string;
  readonly clientId: string;
  readonly scopes: string[];
  readonly resource: string | undefined;
  expired: boolean;
}

/** An in-memory provider that issues, refreshes (rotating the refresh token) and revokes tokens, per user. */
export class TestOAuthProvider implements OAuthServerProvider {
  readonly #clients = new Map<string, OAuthClientInformationFull>();
  readonly #codes = new Map<
    string,
    { client: string; params: AuthorizationParams; user: string }
  >();
  readonly #access = new Map<string, IssuedToken>();
  readonly #refresh = new Map<string, IssuedToken & { access: string }>();
  readonly #options: McpOAuthServerOptions;
  /** Every access and refresh token issued, in order, with its user. */
  readonly issued: { access: string; refresh: string; user: string }[] = [];
  /** Every token `/revoke` was asked to revoke. */
  readonly revoked: string[] = [];
  /** Client ID Metadata Document URLs fetched. */
  readonly fetchedClientDocuments: string[] = [];
  /** The user the next consents are given for when no `x-test-user` header says. */
  currentUser = 'mcp-user';

  constructor(options: McpOAuthServerOptions) {
    this.#options = options;
  }

  get clientsStore(): OAuthRegisteredClientsStore {
    const store: OAuthRegisteredClientsStore = {
      getClient: (clientId) => this.#client(clientId),
    };
    if (this.#options.dynamicRegistration !== false) {
      store.registerClient = async (client) => {
        const full = client as OAuthClientInformationFull;
        this.#clients.set(full.client_id, full);
        return full;
      };
    }
    return store;
  }

  async #client(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    const registered = this.#clients.get(clientId);
    if (registered) return registered;
    if (this.#options.clientIdMetadataDocuments === false || !/^https?:\/\//.test(clientId)) {
      return undefined;
    }
    // A Client ID Metadata Document: the client_id is the URL of the client's metadata.
    this.fetchedClientDocuments.push(clientId);
    const answer = await fetch(clientId, { redirect: 'error' });
    if (!answer.ok) return undefined;
    const document = (await answer.json()) as Record<string, unknown>;
    if (document.client_id !== clientId || !Array.isArray(document.redirect_uris)) return undefined;
    return { ...(document as OAuthClientInformationFull), token_endpoint_auth_method: 'none' };
  }

  async authorize(
    client: OAuthClientInformationFull,
    params: AuthorizationParams,
    res: ExpressResponse,
  ): Promise<void> {
    const header = res.req.headers['x-test-user'];
    const user = typeof header === 'string' ? header : this.currentUser;
    const code = randomBytes(16).toString('hex');
    this.#codes.set(code, { client: client.client_id, params, user });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.href);
  }

  async challengeForAuthorizationCode(
    _client: OAuthClientInformationFull,
    code: string,
  ): Promise<string> {
    const grant = this.#codes.get(code);
    if (!grant) throw new InvalidGrantError('Unknown authorization code');
    return grant.params.codeChallenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
  ): Promise<OAuthTokens> {
    const grant = this.#codes.get(code);
    if (!grant || grant.client !== client.client_id) {
      throw new InvalidGrantError('Unknown authorization code');
    }
    this.#codes.delete(code);
    return this.#issue({
      user: grant.user,
      clientId: client.client_id,
      scopes: grant.params.scopes ?? [],
      resource: grant.params.resource?.href,
      expired: false,
    });
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
  ): Promise<OAuthTokens> {
    const grant = this.#refresh.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) {
      throw new InvalidGrantError('Unknown refresh token');
    }
    // Rotation: the old refresh token and its access token end here.
    this.#refresh.delete(refreshToken);
    this.#access.delete(grant.access);
    return this.#issue({ ...grant, expired: false });
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const issued = this.#access.get(token);
    if (!issued || issued.expired) throw new InvalidTokenError('Invalid or expired token');
    return {
      token,
      clientId: issued.clientId,
      scopes: issued.scopes,
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
      extra: { user: issued.user },
      ...(issued.resource === undefined ? {} : { resource: new URL(issued.resource) }),
    };
  }

  async revokeToken(
    _client: OAuthClientInformationFull,
    request: OAuthTokenRevocationRequest,
  ): Promise<void> {
    this.revoked.push(request.token);
    const refresh = this.#refresh.get(request.token);
    if (refresh) {
      this.#refresh.delete(request.token);
      this.#access.delete(refresh.access);
    }
    this.#access.delete(request.token);
  }

  /** Makes every access token issued so far refused, as if its time had run out. */
  expireAccessTokens(): void {
    for (const token of this.#access.values()) token.expired = true;
  }

  #issue(grant: IssuedToken): OAuthTokens {
    const access = `at-${randomBytes(18).toString('hex')}`;
    const refresh = `rt-${randomBytes(18).toString('hex')}`;
    this.#access.set(access, { ...grant });
    this.#refresh.set(refresh, { ...grant, access });
    this.issued.push({ access, refresh, user: grant.user });
    return {
      access_token: access,
      token_type: 'bearer',
      expires_in: this.#options.accessTokenSeconds ?? 3600,
      refresh_token: refresh,
      scope: grant.scopes.join(' '),
    };
  }
}

/** Starts the server on 127.0.0.1 on a free port. */
export async function startMcpOAuthServer(
  options: McpOAuthServerOptions = {},
): Promise<McpOAuthServer> {
  const app = express();
  const http: HttpServer = await new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
  const { port } = http.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const mcpUrl = `${url}/mcp`;
  const provider = new TestOAuthProvider(options);
  const issuerUrl = new URL(`${url}/`);
  const scopes = ['mcp:tools'];

  app.get('/control/log', (_req, res) => {
    // Read by the browser tests too, from another origin.
    res.set('access-control-allow-origin', '*');
    res.json({
      issued: provider.issued,
      revoked: provider.revoked,
      fetchedClientDocuments: provider.fetchedClientDocuments,
    });
  });
  app.post('/control/expire-access', (_req, res) => {
    provider.expireAccessTokens();
    res.json({ ok: true });
  });
  // The metadata the SDK's router serves, with what a test changes; served ahead of the router.
  app.get('/.well-known/oauth-authorization-server', (_req, res) => {
    if (options.rawMetadata !== undefined) {
      res.type('application/json').send(options.rawMetadata);
      return;
    }
    const metadata: Record<string, unknown> = {
      ...createOAuthMetadata({ provider, issuerUrl, scopesSupported: scopes }),
      client_id_metadata_document_supported: options.clientIdMetadataDocuments !== false,
    };
    if (options.dynamicRegistration === false) delete metadata.registration_endpoint;
    res.json(options.metadata ? options.metadata(metadata) : metadata);
  });
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl,
      scopesSupported: scopes,
      resourceServerUrl: new URL(mcpUrl),
      // Tests run many flows a minute from one address.
      authorizationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
    }),
  );
  const bearer = requireBearerAuth({
    verifier: provider,
    requiredScopes: [],
    resourceMetadataUrl: `${url}/.well-known/oauth-protected-resource/mcp`,
  });
  app.post('/mcp', express.json(), bearer, async (req, res) => {
    const server = mcpServer(req.auth, req.headers.authorization ?? '');
    // Stateless (no session id generator): each POST is served by a server of its own.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.all('/mcp', (_req, res) => {
    res.status(405).set('allow', 'POST').end();
  });

  return {
    url,
    mcpUrl,
    provider,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** The tools: `whoami` (the user the token was granted by) and `echo_auth` (a careless tool quoting the Authorization header it got). */
function mcpServer(auth: AuthInfo | undefined, authorization: string): Server {
  const server = new Server(
    { name: 'oauth-test', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: 'whoami', description: 'Names the user.', inputSchema: { type: 'object' } },
      {
        name: 'echo_auth',
        description: 'Quotes the credentials.',
        inputSchema: { type: 'object' },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const user = String(auth?.extra?.user ?? '');
    if (request.params.name === 'whoami') {
      return { content: [{ type: 'text', text: user }], structuredContent: { user } };
    }
    return { content: [{ type: 'text', text: `you sent ${authorization}` }] };
  });
  return server;
}
