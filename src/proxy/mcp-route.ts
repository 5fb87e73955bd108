/**
 * MCP upstreams behind the proxy: the page's agent talks to `/mcp/<name>`, the proxy
 * forwards to the server configured under that name with the credentials the server
 * environment holds, and streams the answer back. Only configured names are served (the
 * proxy is never an open relay), only the headers Streamable HTTP needs cross it, each
 * message is held to the server's policy (methods, tools, no batches) and counted against
 * the caller's limits, and what comes back is capped and has the credentials blanked; an
 * upstream's error body is never relayed.
 */

import { isRecord } from '../errors/field-checks';
import { PROXY_ERROR_HEADER } from '../protocol/proxy-refusals.js';
import { type ProxyCaller, runAuthorize } from './authorize.js';
import { isForeignOrigin } from './cors-policy.js';
import { errorResponse } from './error-response.js';
import { type McpRequestFacts, mcpResponseHeaders, relayMcpSuccess } from './mcp-answer.js';
import { answerMcpOAuth, isOAuthAction } from './mcp-oauth-flow.js';
import { sendWithGrant } from './mcp-oauth-send.js';
import { checkMcpMessage } from './mcp-policy.js';
import { mayCarryProtocolError, relayableProtocolError } from './mcp-protocol-error.js';
import { checkMirroredHeaders } from './mcp-request-headers.js';
import type { ResolvedMcpUpstream } from './mcp-upstreams.js';
import type { ResolvedProxyOptions } from './proxy-options.js';
import { readJsonWithin } from './request-body.js';

/**
 * Counts one request against the caller's limits, as the model routes do: `undefined` to go
 * on, or the refusal to answer with (429, or 503 when the counts cannot be read).
 */
export type AdmitCaller = (caller: ProxyCaller) => Promise<Response | undefined>;

/**
 * Page request headers Streamable HTTP needs; nothing else of the page's goes upstream. The
 * 2026-07-28 revision's `Mcp-Method` and `Mcp-Name` are checked against the body first
 * (`checkMirroredHeaders`); its `Mcp-Param-*` headers (tool arguments a server asks to see as
 * headers) go too, and the server checks them against the body the proxy sends.
 */
const FORWARDED_REQUEST_HEADERS = [
  'accept',
  'content-type',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'mcp-method',
  'mcp-name',
];

/** The prefix of the headers a 2026-07-28 client mirrors tool arguments into. */
const PARAMETER_HEADER_PREFIX = 'mcp-param-';

const METHODS = new Set(['GET', 'POST', 'DELETE']);

/** The MCP server name a request's path asks for, or undefined when it is not under the MCP path. */
export function mcpNameOf(request: Request, mcpPath: string): string | undefined {
  const { pathname } = new URL(request.url);
  const prefix = `${mcpPath}/`;
  return pathname.startsWith(prefix) ? pathname.slice(prefix.length) : undefined;
}

/** Answers a request for `/mcp/<name>`: refused, or forwarded and streamed back. */
export async function answerMcp(
  request: Request,
  name: string,
  config: ResolvedProxyOptions,
  admit: AdmitCaller,
): Promise<Response> {
  if (isForeignOrigin(request, config.allowedOrigins)) {
    return errorResponse(
      403,
      'origin_not_allowed',
      `Origin ${request.headers.get('origin') ?? ''} may not use this proxy.`,
    );
  }
  const [serverName = '', area, action, ...rest] = name.split('/');
  const upstream = config.mcp.get(serverName);
  if (!upstream) {
    return errorResponse(404, 'not_found', 'No MCP server of that name is served by this proxy.');
  }
  if (area !== undefined) {
    if (!upstream.oauth || area !== 'oauth' || rest.length > 0 || !isOAuthAction(action)) {
      return errorResponse(404, 'not_found', 'No such route of this MCP server.');
    }
    const route = { name: serverName, url: upstream.url, oauth: upstream.oauth };
    return answerMcpOAuth(request, route, action, config, admit);
  }
  if (!METHODS.has(request.method)) {
    return errorResponse(
      405,
      'method_not_allowed',
      `An MCP endpoint takes GET, POST or DELETE, not ${request.method}.`,
      { headers: new Headers({ allow: 'GET, POST, DELETE' }) },
    );
  }
  const authorized = await runAuthorize(config.authorize, request);
  if (authorized.kind === 'response') return authorized.response;
  if (authorized.kind === 'failed') {
    config.logger(`Airlock proxy: ${authorized.reason}; the request was refused.`);
    return errorResponse(500, 'authorize_failed', 'The proxy could not check who is calling.');
  }
  let body: string | undefined;
  let facts: McpRequestFacts = { requestId: undefined };
  if (request.method === 'POST') {
    const read = await readJsonRpc(request, config.maxBodyBytes, upstream);
    if (read instanceof Response) return read;
    ({ body, facts } = read);
  }
  // Every request counts, the page's GET (its notification stream) and DELETE included.
  const refusal = await admit(authorized.caller);
  if (refusal) return refusal;
  const send = (token: string | undefined) =>
    forwardTo(config.fetch, upstream, request, body, token, () =>
      errorResponse(
        502,
        'upstream_unreachable',
        `The proxy could not reach the MCP server "${serverName}" (${request.signal.aborted ? 'the client disconnected' : 'it did not answer'}).`,
      ),
    );
  if (upstream.oauth) {
    const sent = await sendWithGrant(serverName, upstream.oauth, authorized.caller, send, config);
    if (sent.answer.status < 400) {
      return relayMcpSuccess(sent.answer, serverName, sent.upstream(upstream), facts);
    }
    if (sent.answer.headers.has(PROXY_ERROR_HEADER)) return sent.answer;
    return relayError(sent.answer, serverName, sent.upstream(upstream), config);
  }
  const answer = await send(undefined);
  if (answer.headers.has(PROXY_ERROR_HEADER)) return answer;
  if (answer.status < 400) return relayMcpSuccess(answer, serverName, upstream, facts);
  return relayError(answer, serverName, upstream, config);
}

/** Sends the request upstream once; the proxy's 502 when the server cannot be reached. */
async function forwardTo(
  fetchFn: typeof fetch,
  upstream: ResolvedMcpUpstream,
  request: Request,
  body: string | undefined,
  token: string | undefined,
  unreachable: () => Response,
): Promise<Response> {
  try {
    return await fetchFn(upstream.url, {
      method: request.method,
      headers: upstreamHeaders(request, upstream, token),
      ...(body === undefined ? {} : { body }),
      // A page that goes away closes the upstream request and its stream.
      signal: request.signal,
      // Following a redirect would resend the credentials to wherever it points.
      redirect: 'error',
    });
  } catch {
    return unreachable();
  }
}

/** The body as one JSON-RPC message the policy allows, re-serialised, or the refusal. */
async function readJsonRpc(
  request: Request,
  maxBodyBytes: number,
  upstream: ResolvedMcpUpstream,
): Promise<{ body: string; facts: McpRequestFacts } | Response> {
  const read = await readJsonWithin(request, maxBodyBytes, 'The request body is not JSON-RPC.');
  if (read instanceof Response) return read;
  const checked = checkMcpMessage(read.json, upstream.policy);
  if (checked.kind === 'refused') {
    return errorResponse(checked.status, checked.code, checked.message);
  }
  const mismatch = isRecord(read.json)
    ? checkMirroredHeaders(request.headers, read.json)
    : undefined;
  if (mismatch) return errorResponse(mismatch.status, mismatch.code, mismatch.message);
  // The proxy's own serialisation: the page's text never goes upstream.
  return { body: JSON.stringify(read.json), facts: { requestId: checked.requestId } };
}

function upstreamHeaders(
  request: Request,
  upstream: ResolvedMcpUpstream,
  token: string | undefined,
): Headers {
  const headers = new Headers();
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  for (const [name, value] of request.headers) {
    if (name.startsWith(PARAMETER_HEADER_PREFIX)) headers.set(name, value);
  }
  // Last, so nothing the page sends can replace them.
  for (const [name, value] of Object.entries(upstream.headers)) headers.set(name, value);
  if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
  return headers;
}

/**
 * An error keeps its status (a 404 tells the client its session is gone) but not its body,
 * save a 2026-07-28 server's JSON-RPC error, rebuilt (`relayableProtocolError`).
 * A refused credential is the server's to fix, so it is a 502, not a 401 the page would
 * try to answer.
 */
async function relayError(
  answer: Response,
  name: string,
  upstream: ResolvedMcpUpstream,
  config: ResolvedProxyOptions,
): Promise<Response> {
  const headers = mcpResponseHeaders(answer, upstream);
  const protocolError = mayCarryProtocolError(answer)
    ? await relayableProtocolError(answer, upstream)
    : undefined;
  if (protocolError !== undefined) {
    // A 2026-07-28 server's JSON-RPC error: its client reads it to recover (see the module).
    headers.set('content-type', 'application/json');
    return new Response(protocolError, { status: answer.status, headers });
  }
  await answer.body?.cancel().catch(() => undefined);
  config.logger(`Airlock proxy: the MCP server "${name}" answered HTTP ${answer.status}.`);
  if (answer.status === 401 || answer.status === 403) {
    return errorResponse(
      502,
      'upstream_auth_failed',
      `The proxy could not authenticate with the MCP server "${name}" (HTTP ${answer.status}): check the credentials configured on the server.`,
    );
  }
  const error = errorResponse(
    answer.status,
    'upstream_error',
    `The MCP server "${name}" answered HTTP ${answer.status}.`,
  );
  for (const [header, value] of headers) {
    if (header !== 'content-type') error.headers.set(header, value);
  }
  return error;
}
