/**
 * How a connection meets the official SDK's 2.x client: the negotiation mode for each
 * configured revision, the transport's fetch, the output validator it is given, and what its
 * errors mean. Apart from the connection so that each reads as one idea.
 */
import {
  type FetchLike,
  type jsonSchemaValidator,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnsupportedProtocolVersionError,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import type { McpProtocol } from '../../protocol/mcp';

/** The query parameter that gives each resuming GET a URL of its own. */
const RESUME_PARAMETER = 'airlock-resume';
let resumptions = 0;

/**
 * The transport's fetch. It resumes a dropped response stream with a GET of the endpoint
 * (`Last-Event-ID`) while its standalone event stream, a GET of the same URL, is open, and
 * Firefox holds back a GET of a URL until an open GET of it ends: a resuming GET gets a URL
 * of its own (a query parameter a server ignores; the proxy route forwards no query).
 */
export const transportFetch: FetchLike = (url, init) => {
  if (init?.method !== 'GET' || !new Headers(init.headers).has('last-event-id')) {
    return fetch(url, init);
  }
  const resuming = new URL(url);
  resumptions += 1;
  resuming.searchParams.set(RESUME_PARAMETER, String(resumptions));
  return fetch(resuming, init);
};

/**
 * The SDK checks structured content against a tool's output schema with the validator it
 * is given, unbounded. It is given one that accepts everything: the connection checks
 * structured content itself, within bounds (see `prepareSchemaCheck`).
 */
export const UNCHECKED: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/** The SDK's negotiation mode for a configured revision: `2025-11-25` is its plain 2025 connect. */
export function negotiationMode(protocol: McpProtocol | undefined): VersionNegotiationMode {
  if (protocol === 'auto') return 'auto';
  if (protocol === '2026-07-28') return { pin: '2026-07-28' };
  return 'legacy';
}

/** A 404 on a request with a session id: the server ended the session (restart, expiry). */
export function sessionLost(error: unknown): boolean {
  return error instanceof SdkHttpError && error.status === 404;
}

/**
 * The server answered the negotiation without offering the revision asked for: a 2025 server
 * or a `server/discover` of the wrong shape (pinned), or a `server/discover` naming only
 * revisions the client does not speak. Not an outage: a configuration to change.
 */
export function protocolRefused(error: unknown): boolean {
  if (error instanceof UnsupportedProtocolVersionError) return true;
  return (
    error instanceof SdkError &&
    !(error instanceof SdkHttpError) &&
    error.code === SdkErrorCode.EraNegotiationFailed &&
    error.message.includes('did not offer pinned protocol version')
  );
}

/** The proxy's 401 `mcp_auth_required`: the server takes OAuth and this user holds no grant. */
export function needsAuthorization(error: unknown): boolean {
  if (!(error instanceof SdkHttpError) || error.status !== 401) return false;
  // The body is in the message of a refused request, and in `data.text` of a refused probe.
  return `${error.message} ${String(error.data?.text)}`.includes('"mcp_auth_required"');
}
