/**
 * MCP servers an agent reaches from its worker (Model Context Protocol, Streamable HTTP).
 * Plain data: the configuration crosses from the page to the agent worker.
 */

/**
 * When a call to one of a server's tools waits for the user: `always` (the default);
 * `unless-read-only`: not for tools the server marks `readOnlyHint: true` (a hint the
 * server gives, so only for servers the app trusts to say so); `never`.
 */
export type McpApproval = 'always' | 'unless-read-only' | 'never';

/**
 * Which MCP protocol revision an agent speaks to a server: `2025-11-25` (the default) opens a
 * session with the `initialize` handshake, as every MCP server before 2026-07-28 expects;
 * `2026-07-28` is the stateless revision (no handshake, no session, every request carries its
 * own protocol version and client capabilities) and fails `mcp-protocol-unsupported` against a
 * server that does not offer it; `auto` asks the server first (`server/discover`) and falls
 * back to `2025-11-25` when it answers as a 2025 server.
 */
export type McpProtocol = 'auto' | '2026-07-28' | '2025-11-25';

/** One MCP server of an agent. */
export interface McpServerConfig {
  /**
   * Names the server and prefixes its tools: the model sees `<name>__<tool>`. Letters,
   * digits, `_` and `-`, at most 32 characters, no `__`.
   */
  readonly name: string;
  /** The server's Streamable HTTP endpoint, normally the app's proxy route (`/mcp/<name>`). */
  readonly url: string;
  /** The protocol revision to speak (default `2025-11-25`); see {@link McpProtocol}. */
  readonly protocol?: McpProtocol;
  /** Sent with every request (e.g. an app session token for the proxy; never a third party's secret). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Which calls wait for the user (default `always`). */
  readonly approval?: McpApproval;
  /** When set, only these tools of the server (their own names, unprefixed) are offered. */
  readonly allowedTools?: readonly string[];
  /** A call's deadline (default 30 000 ms); at the deadline the server is sent a cancellation. */
  readonly timeoutMs?: number;
  /** How long connecting and listing the tools may take before `ready` fails `mcp-unavailable` (default 10 000 ms). */
  readonly connectTimeoutMs?: number;
  /** The longest output the model is shown per call (default: the tools' default). */
  readonly maxOutputChars?: number;
  /**
   * The most tools of this server offered to the model (default 100). Tools are kept in the
   * order the server lists them (after `allowedTools`); the others are dropped, and every
   * run starts with an `mcp-tools-dropped` warning naming them.
   */
  readonly maxTools?: number;
  /**
   * The most characters the offered tools' descriptions and input and output schemas (as
   * JSON) may take together (default 200 000), so a server cannot swell every model request.
   * A tool that would go past it is dropped, named in the same warning.
   */
  readonly maxSchemaChars?: number;
}

/** Between a server's name and its tool's name in the name the model sees. */
export const MCP_NAME_SEPARATOR = '__';
