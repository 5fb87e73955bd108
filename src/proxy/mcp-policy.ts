/**
 * What a page may ask an MCP server through the proxy. The page's tool allowlist and
 * approvals live in the agent worker, which any authorised user can bypass by posting
 * JSON-RPC to `/mcp/<name>` themselves; the proxy holds the server's credentials, so it
 * checks every message again: known methods only, `tools/call` only of the tools the app
 * configured for that server, one message per request (no batches).
 */
import { isRecord } from '../errors/field-checks';
import type { ProxyErrorCode } from './error-response.js';

/**
 * JSON-RPC methods Airlock's MCP client sends: the handshake (2025-11-25) or the discovery
 * (2026-07-28), listing and calling tools, cancelling a call, pings, and the 2026-07-28
 * revision's stream of list changes. An upstream's `allowedMethods` adds to these.
 */
export const DEFAULT_MCP_METHODS: readonly string[] = [
  'initialize',
  'notifications/initialized',
  'server/discover',
  'ping',
  'tools/list',
  'tools/call',
  'notifications/cancelled',
  'subscriptions/listen',
];

/** The policy of one MCP upstream. */
export interface McpPolicy {
  /** Methods a message may name. */
  readonly methods: ReadonlySet<string>;
  /** Tools a `tools/call` may name. */
  readonly tools: ReadonlySet<string>;
}

/** A checked message, and what its answer needs of it. */
export interface CheckedMcpMessage {
  readonly kind: 'checked';
  /** The id of the request (an answer cut short must still answer it), when the message is a request. */
  readonly requestId: string | number | undefined;
}

/** Why a message was refused. */
export interface McpRefusal {
  readonly kind: 'refused';
  readonly status: number;
  readonly code: ProxyErrorCode;
  readonly message: string;
}

/** Checks one POSTed JSON-RPC body against `policy`. */
export function checkMcpMessage(body: unknown, policy: McpPolicy): CheckedMcpMessage | McpRefusal {
  if (Array.isArray(body)) {
    // MCP dropped batches in its 2025-06-18 revision; one request a message keeps every one counted and checked.
    return refused(
      400,
      'mcp_batch_not_allowed',
      'A JSON-RPC batch is not accepted: send one message per request.',
    );
  }
  if (!isRecord(body) || body.jsonrpc !== '2.0') {
    return refused(400, 'invalid_json', 'The request body is not a JSON-RPC 2.0 message.');
  }
  const { id, method } = body;
  const hasId = Object.hasOwn(body, 'id');
  if (hasId && !(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) {
    return refused(400, 'invalid_json', 'A JSON-RPC id must be a string or an integer.');
  }
  if (method === undefined) {
    // A response to the server's own request (a ping): it carries a result or an error, and no method.
    const isResponse = hasId && (Object.hasOwn(body, 'result') || Object.hasOwn(body, 'error'));
    if (!isResponse) {
      return refused(400, 'invalid_json', 'A JSON-RPC message needs a method, or is a response.');
    }
    return { kind: 'checked', requestId: undefined };
  }
  if (typeof method !== 'string') {
    return refused(400, 'invalid_json', 'A JSON-RPC method must be a string.');
  }
  if (!policy.methods.has(method)) {
    return refused(
      403,
      'mcp_method_not_allowed',
      `The method "${printable(method)}" is not allowed on this MCP server.`,
    );
  }
  if (method === 'tools/call') {
    const name = isRecord(body.params) ? body.params.name : undefined;
    if (typeof name !== 'string' || !policy.tools.has(name)) {
      return refused(
        403,
        'mcp_tool_not_allowed',
        typeof name === 'string'
          ? `The tool "${printable(name)}" is not allowed on this MCP server.`
          : 'A tools/call must name a tool.',
      );
    }
  }
  return { kind: 'checked', requestId: hasId ? (id as string | number) : undefined };
}

/**
 * A `tools/list` answer (a response whose result holds a `tools` array) with only the allowed
 * tools, or undefined when `message` is not one: the page is never offered a tool it could
 * not call. Any response is looked at, not only the one to the request posted, as a resumed
 * stream (a GET with `Last-Event-ID`) replays answers to earlier requests.
 */
export function allowedToolList(message: unknown, tools: ReadonlySet<string>): unknown {
  const isResponse =
    isRecord(message) && Object.hasOwn(message, 'id') && message.method === undefined;
  if (!isResponse || !isRecord(message.result)) return undefined;
  const listed = message.result.tools;
  if (!Array.isArray(listed)) return undefined;
  const kept = listed.filter(
    (tool) => isRecord(tool) && typeof tool.name === 'string' && tools.has(tool.name),
  );
  return { ...message, result: { ...message.result, tools: kept } };
}

function refused(status: number, code: ProxyErrorCode, message: string): McpRefusal {
  return { kind: 'refused', status, code, message };
}

/** A name the page sent, fit to quote in a message: short and of plain characters. */
function printable(name: string): string {
  const plain = name.replace(/[^\w./-]/g, '?');
  return plain.length > 64 ? `${plain.slice(0, 64)}…` : plain;
}
