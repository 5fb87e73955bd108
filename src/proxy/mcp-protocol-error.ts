/**
 * The one upstream error body the MCP route relays. In the 2026-07-28 revision a server
 * answers a request it cannot serve with a 400 or 404 whose body is a JSON-RPC error (an
 * unsupported protocol version with the versions it supports, a header that does not match
 * the body, a method it does not have), and a client reads that body to tell a modern server
 * from a 2025 one and to recover. Any other error body is still never relayed: this one is
 * rebuilt from its checked fields, its message redacted and cut, its `data` kept only for
 * the unsupported version (a list of short version strings).
 */
import { isRecord } from '../errors/field-checks';
import type { ResolvedMcpUpstream } from './mcp-upstreams.js';
import { readBodyWithin } from './request-body.js';

/** A JSON-RPC error body is short; a longer one is not relayed. */
const MAX_ERROR_BYTES = 16 * 1024;
const MAX_MESSAGE_CHARS = 300;
/** The revision's `UnsupportedProtocolVersionError`, whose `data` says what the server speaks. */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The statuses a 2026-07-28 server gives its JSON-RPC errors. */
export function mayCarryProtocolError(answer: Response): boolean {
  return (
    (answer.status === 400 || answer.status === 404) &&
    (answer.headers.get('content-type') ?? '').includes('application/json')
  );
}

/**
 * The upstream's JSON-RPC error, rebuilt for the page, or undefined when its body is not one
 * (the body is read either way).
 */
export async function relayableProtocolError(
  answer: Response,
  upstream: ResolvedMcpUpstream,
): Promise<string | undefined> {
  let text: string | 'too-large';
  try {
    text = await readBodyWithin(answer, MAX_ERROR_BYTES);
  } catch {
    return undefined;
  }
  if (text === 'too-large') return undefined;
  let message: unknown;
  try {
    message = JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
  if (!isRecord(message) || message.jsonrpc !== '2.0' || !isRecord(message.error)) return undefined;
  const { id } = message;
  const { code, message: said, data } = message.error;
  const idFits = id === null || typeof id === 'string' || Number.isSafeInteger(id);
  if (!idFits || !Number.isSafeInteger(code) || typeof said !== 'string') return undefined;
  const error: Record<string, unknown> = {
    code,
    message: upstream.redact(said).slice(0, MAX_MESSAGE_CHARS),
  };
  if (code === UNSUPPORTED_PROTOCOL_VERSION) {
    const kept = versionsData(data, upstream.redact);
    if (kept) error.data = kept;
  }
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}

/** `{ supported, requested? }` of short version strings, or undefined when `data` is not that. */
function versionsData(
  data: unknown,
  redact: (text: string) => string,
): Record<string, unknown> | undefined {
  if (!isRecord(data) || !Array.isArray(data.supported)) return undefined;
  const isVersion = (value: unknown): value is string =>
    typeof value === 'string' && /^[\w.-]{1,32}$/.test(value);
  // Redacted first: a careless server's credential could look like a version; then it does not.
  const supported = data.supported
    .map((value) => (typeof value === 'string' ? redact(value) : value))
    .filter(isVersion)
    .slice(0, 16);
  const requested = typeof data.requested === 'string' ? redact(data.requested) : undefined;
  return isVersion(requested) ? { supported, requested } : { supported };
}
