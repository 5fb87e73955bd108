/**
 * The MCP servers a proxy serves, as its options name them: checked once, when the handler
 * is made, with the policy each is held to and the secrets their answers must never show.
 */
import { AirlockError } from '../errors/airlock-error.js';
import { type McpOAuth, type ResolvedMcpOAuth, resolveMcpOAuth } from './mcp-oauth-options.js';
import { DEFAULT_MCP_METHODS, type McpPolicy } from './mcp-policy.js';
import { createSecretsRedactor, type Redactor } from './redact-key.js';

/** One MCP server the proxy forwards to. */
export interface McpUpstream {
  /** The server's Streamable HTTP endpoint, e.g. `https://mcp.example.com/mcp`. */
  url: string;
  /** Added to every forwarded request, e.g. `{ Authorization: 'Bearer …' }` from the server environment. */
  headers?: Readonly<Record<string, string>>;
  /**
   * The server's tools listed to the page and a `tools/call` may name: the `allowedTools`
   * the app gives this server in `createAgent({ mcp })`. Left out, none is listed or
   * callable: the page's own allowlist is the page's, and any signed-in user can post past it.
   */
  allowedTools?: readonly string[];
  /**
   * JSON-RPC methods allowed on top of what Airlock's client sends (`initialize`,
   * `notifications/initialized`, `server/discover`, `ping`, `tools/list`, `tools/call`,
   * `notifications/cancelled`, `subscriptions/listen`), e.g. `['resources/read']` for
   * another client.
   */
  allowedMethods?: readonly string[];
  /**
   * The largest answer relayed, in bytes: a JSON answer over it is a 502, an event stream is
   * cut where it passes it (a request still waiting gets a JSON-RPC error). Default 4 MiB.
   */
  maxResponseBytes?: number;
  /**
   * OAuth held by the proxy: each user authorises the server once (`authorizeMcp` on the
   * page), the proxy keeps their tokens and adds the user's access token to their requests.
   * Left out, the server gets only `headers`. See docs/mcp.md#oauth.
   */
  auth?: McpOAuth;
}

/** An {@link McpUpstream} checked, with the secrets its answers must never show. */
export interface ResolvedMcpUpstream {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly policy: McpPolicy;
  readonly maxResponseBytes: number;
  /** Blanks the credentials (header values, the tokens in them, secrets in the URL) from text. */
  readonly redact: Redactor;
  /** Set when the server takes OAuth per user. */
  readonly oauth: ResolvedMcpOAuth | undefined;
}

/** The default path MCP upstreams are served under: `/mcp/<name>`. */
export const DEFAULT_MCP_PATH = '/mcp';

/** The default {@link McpUpstream.maxResponseBytes}. */
export const DEFAULT_MCP_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Checks `mcp` of the proxy options; throws `invalid-options` on a mistake. */
export function resolveMcpUpstreams(
  mcp: Readonly<Record<string, McpUpstream>> | undefined,
  now: () => number = Date.now,
): ReadonlyMap<string, ResolvedMcpUpstream> {
  const upstreams = new Map<string, ResolvedMcpUpstream>();
  for (const [name, upstream] of Object.entries(mcp ?? {})) {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
      throw invalid(`\`mcp\` names "${name}": use letters, digits, "_" and "-".`);
    }
    let url: URL;
    try {
      url = new URL(upstream?.url);
    } catch {
      throw invalid(`\`mcp.${name}.url\` is not a URL.`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw invalid(`\`mcp.${name}.url\` must be an http(s) URL.`);
    }
    const headers = upstream.headers ?? {};
    if (Object.values(headers).some((value) => typeof value !== 'string')) {
      throw invalid(`\`mcp.${name}.headers\` must map header names to strings.`);
    }
    const tools = names(upstream.allowedTools, `mcp.${name}.allowedTools`);
    const methods = names(upstream.allowedMethods, `mcp.${name}.allowedMethods`);
    const maxResponseBytes = upstream.maxResponseBytes ?? DEFAULT_MCP_MAX_RESPONSE_BYTES;
    if (!(Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0)) {
      throw invalid(`\`mcp.${name}.maxResponseBytes\` must be a positive integer.`);
    }
    const oauth =
      upstream.auth === undefined
        ? undefined
        : resolveMcpOAuth(upstream.auth, `mcp.${name}.auth`, now);
    if (oauth && Object.keys(headers).some((header) => header.toLowerCase() === 'authorization')) {
      throw invalid(
        `\`mcp.${name}\` has both \`auth\` and an Authorization header: OAuth sets it.`,
      );
    }
    const clientSecret = oauth?.clientSecret === undefined ? [] : [oauth.clientSecret];
    upstreams.set(name, {
      url: url.href,
      headers: { ...headers },
      policy: { tools: new Set(tools), methods: new Set([...DEFAULT_MCP_METHODS, ...methods]) },
      maxResponseBytes,
      redact: createSecretsRedactor([...secretsOf(url, headers), ...clientSecret]),
      oauth,
    });
  }
  return upstreams;
}

/** A list of names from the options, checked. */
function names(list: readonly string[] | undefined, field: string): readonly string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || item === '')) {
    throw invalid(`\`${field}\` must be an array of names.`);
  }
  return list;
}

/**
 * What an MCP server's answer must not show: each configured header value, the words in it
 * (`ghp_…` of `Bearer ghp_…`), and the URL's password and query values (`?token=…`).
 */
function secretsOf(url: URL, headers: Readonly<Record<string, string>>): string[] {
  const secrets: string[] = [];
  for (const value of Object.values(headers)) secrets.push(value, ...value.split(/\s+/));
  if (url.password !== '') secrets.push(url.password, decodedOrSame(url.password));
  for (const value of url.searchParams.values()) secrets.push(value);
  return secrets;
}

function decodedOrSame(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function invalid(message: string): AirlockError {
  return new AirlockError('invalid-options', `Airlock proxy: ${message}`);
}
