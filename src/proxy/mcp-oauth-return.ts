/**
 * Redirect mode of MCP OAuth: where the callback may send the browser back (`returnTo`, asked
 * for at `start`), and the redirect it answers. Only to the page's own origin (the `Origin` of
 * the start request, which the CORS policy has already admitted), the proxy's public origin, or
 * an origin `allowedOrigins` lists: the proxy is never an open redirect. The marker it adds
 * says only which server and how it went; the page asks `status` for the truth.
 */
import {
  MCP_OAUTH_RETURN_PARAM,
  MCP_OAUTH_RETURN_SERVER_PARAM,
  type McpOAuthMessage,
} from '../protocol/mcp-oauth.js';
import { errorResponse } from './error-response.js';
import type { ResolvedProxyOptions } from './proxy-options.js';
import { readBodyWithin } from './request-body.js';

/** The longest `returnTo` taken; the start's body is at most a little more. */
const MAX_RETURN_TO_CHARS = 2048;

const START_BODY = 'The start body is empty, {} or { "returnTo": "<url>" }.';

/**
 * The `returnTo` of a start's body (`undefined` for a popup's start, which sends none), or
 * the refusal to answer: `invalid_field` for a body or URL of the wrong shape,
 * `field_not_allowed` for an origin the page may not be sent to.
 */
export async function readReturnTo(
  request: Request,
  config: ResolvedProxyOptions,
  proxyOrigin: string,
): Promise<{ readonly returnTo: string | undefined } | Response> {
  let text: string;
  try {
    text = await readBodyWithin(request, MAX_RETURN_TO_CHARS + 256);
  } catch {
    return errorResponse(400, 'body_unreadable', 'The request body could not be read.');
  }
  if (text === 'too-large') return invalid('The start body is too large for a returnTo.');
  // A popup's start sends no body.
  if (text.trim() === '') return { returnTo: undefined };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return invalid(START_BODY);
  }
  const body = json as { returnTo?: unknown } | null;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return invalid(START_BODY);
  }
  if (body.returnTo === undefined) return { returnTo: undefined };
  const url = parseReturnTo(body.returnTo);
  if (url === undefined) {
    return invalid(
      `returnTo must be an absolute http(s) URL of at most ${MAX_RETURN_TO_CHARS} characters, without credentials or a fragment.`,
    );
  }
  const pageOrigin = request.headers.get('origin');
  const allowed =
    url.origin === pageOrigin ||
    url.origin === proxyOrigin ||
    (config.allowedOrigins !== '*' && config.allowedOrigins.has(url.origin));
  if (!allowed) {
    config.logger(
      `Airlock proxy: an OAuth start asked to return to ${url.origin}, which is neither the page's origin nor an allowed one; refused.`,
    );
    return errorResponse(
      400,
      'field_not_allowed',
      "returnTo must be on the starting page's origin, the proxy's, or one allowedOrigins lists.",
      { param: 'returnTo' },
    );
  }
  return { returnTo: url.href };
}

/** The redirect that ends a flow started in redirect mode: back to `returnTo`, with the marker. */
export function returnRedirect(
  returnTo: string,
  server: string,
  outcome: McpOAuthMessage['outcome'],
): Response {
  const target = new URL(returnTo);
  target.hash = new URLSearchParams({
    [MCP_OAUTH_RETURN_PARAM]: outcome,
    [MCP_OAUTH_RETURN_SERVER_PARAM]: server,
  }).toString();
  return new Response(null, {
    status: 303,
    headers: {
      location: target.href,
      'cache-control': 'no-store',
      // The callback's URL holds the code: the page returned to must not read it as a referrer.
      'referrer-policy': 'no-referrer',
    },
  });
}

function parseReturnTo(value: unknown): URL | undefined {
  if (typeof value !== 'string' || value.length > MAX_RETURN_TO_CHARS) return undefined;
  try {
    const url = new URL(value);
    const web = url.protocol === 'https:' || url.protocol === 'http:';
    if (!web || url.username !== '' || url.password !== '' || value.includes('#')) return undefined;
    return url;
  } catch {
    return undefined;
  }
}

function invalid(message: string): Response {
  return errorResponse(400, 'invalid_field', message, { param: 'returnTo' });
}
