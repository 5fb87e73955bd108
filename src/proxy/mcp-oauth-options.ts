/**
 * `auth: { type: 'oauth' }` of an MCP upstream: the proxy is the OAuth client of the MCP
 * server for each signed-in user, and holds their tokens; the page only names the server.
 */
import { AirlockError } from '../errors/airlock-error.js';
import { createMemoryMcpAuthStore, type McpAuthStore } from './mcp-auth-store.js';

/** OAuth held by the proxy, per user (MCP authorization, 2025-11-25). See docs/mcp.md#oauth. */
export interface McpOAuth {
  readonly type: 'oauth';
  /** Scopes asked for. Default: the `scopes_supported` of the server's protected resource metadata, else none. */
  readonly scopes?: readonly string[];
  /** A client id registered with the authorization server beforehand. Default: a Client ID Metadata Document, else dynamic registration. */
  readonly clientId?: string;
  /** The secret of `clientId`, from the server environment. Blanked from every answer. */
  readonly clientSecret?: string;
  /**
   * Where the Client ID Metadata Document is served, when the app serves it itself (an
   * https URL). Default: the proxy serves it at `<mcpPath>/<name>/oauth/client-metadata.json`.
   */
  readonly clientMetadataUrl?: string;
  /** The `client_name` the authorization server shows on its consent page. Default `Airlock`. */
  readonly clientName?: string;
  /**
   * The proxy's origin as browsers reach it, e.g. `https://app.example.com`, for the callback
   * and the metadata document URLs. Default: the origin of the request that starts the flow
   * (wrong behind a proxy that rewrites the host: set it there).
   */
  readonly publicOrigin?: string;
  /**
   * Origins the authorization server's endpoints may be on besides its own (a token endpoint
   * on another host). Default none: metadata that sends the code elsewhere is refused.
   */
  readonly trustedOrigins?: readonly string[];
  /** Where tokens, pending authorizations and registrations live. Default: this process's memory. */
  readonly store?: McpAuthStore;
  /** How long a started authorization may take, in ms. Default 600 000 (10 min). */
  readonly stateTtlMs?: number;
  /** The largest metadata document read, in bytes. Default 65 536. */
  readonly maxMetadataBytes?: number;
}

/** {@link McpOAuth} checked, with defaults. */
export interface ResolvedMcpOAuth {
  readonly scopes: readonly string[] | undefined;
  readonly clientId: string | undefined;
  readonly clientSecret: string | undefined;
  readonly clientMetadataUrl: string | undefined;
  readonly clientName: string;
  readonly publicOrigin: string | undefined;
  readonly trustedOrigins: ReadonlySet<string>;
  readonly store: McpAuthStore;
  readonly stateTtlMs: number;
  readonly maxMetadataBytes: number;
  readonly now: () => number;
}

/** Checks `mcp.<name>.auth`; throws `invalid-options` on a mistake. */
export function resolveMcpOAuth(
  auth: McpOAuth,
  field: string,
  now: () => number,
): ResolvedMcpOAuth {
  if (typeof auth !== 'object' || auth === null || auth.type !== 'oauth') {
    throw invalid(`\`${field}\` must be { type: 'oauth', … }.`);
  }
  const scopes = auth.scopes;
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) ||
      scopes.some((scope) => typeof scope !== 'string' || /\s/.test(scope) || scope === ''))
  ) {
    throw invalid(`\`${field}.scopes\` must be an array of scope names.`);
  }
  for (const key of ['clientId', 'clientSecret', 'clientName'] as const) {
    const value = auth[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw invalid(`\`${field}.${key}\` must be a non-empty string.`);
    }
  }
  if (auth.clientSecret !== undefined && auth.clientId === undefined) {
    throw invalid(`\`${field}.clientSecret\` needs \`clientId\`.`);
  }
  const clientMetadataUrl =
    auth.clientMetadataUrl === undefined
      ? undefined
      : httpUrl(auth.clientMetadataUrl, `${field}.clientMetadataUrl`);
  const publicOrigin =
    auth.publicOrigin === undefined
      ? undefined
      : new URL(httpUrl(auth.publicOrigin, `${field}.publicOrigin`)).origin;
  const trusted = auth.trustedOrigins ?? [];
  if (!Array.isArray(trusted))
    throw invalid(`\`${field}.trustedOrigins\` must be an array of origins.`);
  const store = auth.store ?? createMemoryMcpAuthStore(now);
  for (const method of ['set', 'get', 'take', 'delete'] as const) {
    if (typeof store[method] !== 'function') {
      throw invalid(`\`${field}.store\` must have set, get, take and delete.`);
    }
  }
  return {
    scopes,
    clientId: auth.clientId,
    clientSecret: auth.clientSecret,
    clientMetadataUrl,
    clientName: auth.clientName ?? 'Airlock',
    publicOrigin,
    trustedOrigins: new Set(
      trusted.map((origin) => new URL(httpUrl(origin, `${field}.trustedOrigins`)).origin),
    ),
    store,
    stateTtlMs: positive(auth.stateTtlMs, `${field}.stateTtlMs`, 600_000),
    maxMetadataBytes: positive(auth.maxMetadataBytes, `${field}.maxMetadataBytes`, 65_536),
    now,
  };
}

function httpUrl(value: unknown, field: string): string {
  try {
    const url = new URL(String(value));
    if (url.protocol === 'https:' || url.protocol === 'http:') return url.href;
  } catch {
    // Answered below.
  }
  throw invalid(`\`${field}\` must be an http(s) URL.`);
}

function positive(value: number | undefined, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && value > 0)) {
    throw invalid(`\`${field}\` must be a positive integer.`);
  }
  return value;
}

function invalid(message: string): AirlockError {
  return new AirlockError('invalid-options', `Airlock proxy: ${message}`);
}
