/**
 * The 2026-07-28 revision of MCP has no session: every request carries its protocol version in
 * its body (`params._meta`, the envelope) and mirrors it, its method and the tool it calls into
 * headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) that intermediaries may route on.
 * The proxy's policy reads the body, and an upstream (or a gateway in front of it) may read
 * the headers: a request whose headers say something else than its body is refused here, so
 * the two can never disagree about which tool is called.
 */
import { isRecord } from '../errors/field-checks';
import type { McpRefusal } from './mcp-policy.js';

/** The `_meta` key of the envelope's protocol version. */
const ENVELOPE_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

/** Revisions before 2026-07-28: their requests carry the header alone, with no envelope. */
const SESSION_REVISIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);

/** The Base64 form a client gives a header value that is not plain ASCII (`=?base64?…?=`). */
const BASE64_VALUE = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

/**
 * Refuses a message whose mirrored headers do not match its body, or whose envelope is not
 * a protocol version; `undefined` when they agree (or the message carries neither).
 */
export function checkMirroredHeaders(
  headers: Headers,
  message: Record<string, unknown>,
): McpRefusal | undefined {
  const params = isRecord(message.params) ? message.params : undefined;
  const meta = params && isRecord(params._meta) ? params._meta : undefined;
  const hasEnvelope = meta !== undefined && Object.hasOwn(meta, ENVELOPE_VERSION_KEY);
  const envelope = hasEnvelope ? meta[ENVELOPE_VERSION_KEY] : undefined;
  const versionHeader = headers.get('mcp-protocol-version');
  if (hasEnvelope && typeof envelope !== 'string') {
    return mismatch('The request envelope names no protocol version.');
  }
  if (envelope !== undefined && versionHeader !== envelope) {
    return mismatch('The MCP-Protocol-Version header does not match the request envelope.');
  }
  if (envelope === undefined && versionHeader !== null && !SESSION_REVISIONS.has(versionHeader)) {
    // A stateless revision's header with no envelope: an upstream would trust a version nothing states.
    return mismatch('A request of this protocol revision must carry its envelope.');
  }
  const methodHeader = headers.get('mcp-method');
  if (methodHeader !== null && methodHeader !== message.method) {
    return mismatch('The Mcp-Method header does not match the request body.');
  }
  const nameHeader = headers.get('mcp-name');
  if (nameHeader !== null) {
    const named = params?.name ?? params?.uri;
    if (typeof named !== 'string' || decodedValue(nameHeader) !== named) {
      return mismatch('The Mcp-Name header does not match the request body.');
    }
  }
  return undefined;
}

/** A header value as the client meant it: Base64-decoded when sent in the `=?base64?…?=` form. */
function decodedValue(value: string): string | undefined {
  const encoded = BASE64_VALUE.exec(value)?.[1];
  if (encoded === undefined) return value;
  try {
    const bytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function mismatch(message: string): McpRefusal {
  return { kind: 'refused', status: 400, code: 'mcp_header_mismatch', message };
}
