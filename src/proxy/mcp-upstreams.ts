/**
 * The MCP servers a proxy serves, as its options name them: checked once, when the handler
 * is made, with the secrets their errors must never show.
 */
import { AirlockError } from '../errors/airlock-error.js';

/** One MCP server the proxy forwards to. */
export interface McpUpstream {
  /** The server's Streamable HTTP endpoint, e.g. `https://mcp.example.com/mcp`. */
  url: string;
  /** Added to every forwarded request, e.g. `{ Authorization: 'Bearer …' }` from the server environment. */
  headers?: Readonly<Record<string, string>>;
}

/** An {@link McpUpstream} checked, with the secrets its errors must never show. */
export interface ResolvedMcpUpstream {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** The default path MCP upstreams are served under: `/mcp/<name>`. */
export const DEFAULT_MCP_PATH = '/mcp';

/** Checks `mcp` of the proxy options; throws `invalid-options` on a mistake. */
export function resolveMcpUpstreams(
  mcp: Readonly<Record<string, McpUpstream>> | undefined,
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
    upstreams.set(name, { url: url.href, headers: { ...headers } });
  }
  return upstreams;
}

function invalid(message: string): AirlockError {
  return new AirlockError('invalid-options', `Airlock proxy: ${message}`);
}
