import {
  Client,
  type McpSubscription,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { AirlockError } from '../../errors/airlock-error';
import type { McpServerConfig } from '../../protocol/mcp';
import type { ToolCallRequest, ToolCheck, ToolOutcome, ToolSpec } from '../../protocol/tools';
import { later } from '../../timing/later';
import { waitFor } from '../../timing/wait';
import { describeThrown } from '../../tools/run-tool';
import { toolCancelled } from '../../tools/tool-cancelled';
import { type ToolFailure, toolFailure } from '../../tools/tool-failure';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/run-tool-calls';
import { type ToolRunner, timedOut } from '../tools/tool-runner';
import { type McpCallResult, mcpOutcome } from './mcp-results';
import {
  needsAuthorization,
  negotiationMode,
  protocolRefused,
  sessionLost,
  transportFetch,
  UNCHECKED,
} from './mcp-sdk-seams';
import {
  type DroppedTool,
  droppedToolsWarning,
  type ListedTool,
  type OfferedTools,
  offerTools,
  type ServedTool,
} from './mcp-tool-list';

/** Default of `connectTimeoutMs`. */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Pages of `tools/list` read at most: a server that never stops paging is cut off. */
const MAX_LIST_PAGES = 50;
/** How often a `subscriptions/listen` stream that ended is opened again, and after how long. */
const MAX_RELISTENS = 5;
const RELISTEN_DELAY_MS = 1_000;
/** How long ending the session may take when the agent is disposed. */
const CLOSE_TIMEOUT_MS = 1_000;

const CLIENT_INFO = { name: 'airlock-agents', version: '0.1.0' } as const;

/**
 * One MCP server, seen from the agent worker, over Streamable HTTP (the official SDK's 2.x
 * client, which speaks both revisions): its tools as specs the registry offers, and the
 * runner that calls them. Arguments are checked against the tool's input schema here, so a
 * call that does not fit is never sent, and structured content against its output schema,
 * each check within bounds; a listing is cut to the server's caps (`offerTools`).
 *
 * In the 2025-11-25 revision it holds a session: a call's deadline and the run's abort are
 * told to the server (`notifications/cancelled`), a dropped response stream is resumed
 * (`Last-Event-ID`), a session the server no longer knows is replaced by a new one, and
 * list changes come on the session's own stream. In the 2026-07-28 revision there is no
 * session: every request carries the protocol version and capabilities itself, a
 * cancelled call closes its response stream (the revision's cancellation), and list
 * changes come on a `subscriptions/listen` stream.
 */
export class McpServerConnection implements ToolRunner {
  readonly config: McpServerConfig;
  readonly #calls = new Map<string, AbortController>();
  #tools = new Map<string, ServedTool>();
  #dropped: OfferedTools['dropped'] = [];
  #client: Promise<Client> | undefined;
  #subscription: McpSubscription | undefined;
  #relistens = 0;
  #cancelRelisten: (() => void) | undefined;
  #closed = false;
  /** Told of the new specs when the server's tool list changed. */
  onToolsChanged: ((specs: ToolSpec[]) => void) | undefined;

  constructor(config: McpServerConfig) {
    this.config = config;
  }

  get timeoutMs(): number {
    return this.config.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  }

  /** Connects and lists the tools; fails `mcp-unavailable` naming the server. */
  async start(): Promise<ToolSpec[]> {
    const timeoutMs = this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const client = await this.#connected(signal);
      return await this.#listTools(client, signal);
    } catch (error) {
      await this.close();
      if (protocolRefused(error)) {
        const protocol = this.config.protocol ?? '2025-11-25';
        throw new AirlockError(
          'mcp-protocol-unsupported',
          `The MCP server "${this.config.name}" does not offer the protocol revision it is configured with (${protocol}): ${describeThrown(error)}.`,
          { details: { server: this.config.name, protocol } },
        );
      }
      if (needsAuthorization(error)) {
        throw new AirlockError(
          'mcp-auth-required',
          `The MCP server "${this.config.name}" needs this user's authorisation: call authorizeMcp("${this.config.name}").`,
          { details: { server: this.config.name } },
        );
      }
      const reason = signal.aborted ? `no answer within ${timeoutMs} ms` : describeThrown(error);
      throw new AirlockError(
        'mcp-unavailable',
        `The MCP server "${this.config.name}" could not be connected to: ${reason}.`,
        { details: { server: this.config.name } },
      );
    }
  }

  /** The listed tools that are not offered, by their names on the server. */
  get dropped(): readonly DroppedTool[] {
    return this.#dropped.map(({ tool, reason }) => ({ tool, reason }));
  }

  /** The warning every run starts with while some listed tools are not offered. */
  droppedWarning(): { message: string; details: Readonly<Record<string, unknown>> } | undefined {
    return droppedToolsWarning(this.config.name, this.#dropped);
  }

  async check(request: ToolCallRequest): Promise<ToolCheck> {
    const tool = this.#tools.get(request.toolName);
    if (!tool) return notServed(request.toolName);
    const verdict = tool.checkArguments(request.arguments);
    switch (verdict.outcome) {
      case 'valid':
        return { ok: true, needsApproval: false };
      case 'invalid':
        return toolFailure(
          'tool-invalid-arguments',
          `The arguments for tool "${request.toolName}" do not fit its schema: ${verdict.message}. Fix them and call it again.`,
        );
      case 'refused':
        return toolFailure(
          'tool-schema-refused',
          `The arguments for tool "${request.toolName}" could not be checked against its schema (${verdict.message}); the call was not sent.`,
        );
    }
  }

  async execute(request: ToolCallRequest, timeoutMs: number): Promise<ToolOutcome> {
    const tool = this.#tools.get(request.toolName);
    if (!tool) return notServed(request.toolName);
    const controller = new AbortController();
    this.#calls.set(request.callId, controller);
    const cancelDeadline = later(timeoutMs, () => controller.abort(DEADLINE));
    try {
      const result = await this.#call(tool.original, request, controller);
      return checkedOutput(request.toolName, tool, result) ?? mcpOutcome(request.toolName, result);
    } catch (error) {
      if (controller.signal.reason === DEADLINE) {
        return timedOut(request.toolName, timeoutMs, 'the server was told to cancel it');
      }
      if (controller.signal.aborted) {
        return toolCancelled(request.toolName);
      }
      return toolFailure(
        'tool-failed',
        `The MCP server "${this.config.name}" failed the call to "${request.toolName}": ${describeThrown(error)}`,
      );
    } finally {
      cancelDeadline();
      this.#calls.delete(request.callId);
    }
  }

  cancel(callId: string): void {
    this.#calls.get(callId)?.abort(CANCELLED);
  }

  /**
   * Ends the session (an HTTP DELETE; the 2026-07-28 revision has none) or the list-change
   * subscription, and the connection; a server that does not answer is left.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#cancelRelisten?.();
    for (const controller of this.#calls.values()) controller.abort(CANCELLED);
    const client = await this.#client?.catch(() => undefined);
    this.#client = undefined;
    if (!client) return;
    const transport = client.transport;
    const subscription = this.#subscription;
    this.#subscription = undefined;
    const ending = (async () => {
      await subscription?.close().catch(() => undefined);
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
        await transport.terminateSession().catch(() => undefined);
      }
      await client.close();
    })();
    await waitFor(ending, { timeoutMs: CLOSE_TIMEOUT_MS });
  }

  /**
   * Calls a tool; a session the server has forgotten (404) is replaced once, as the call never
   * ran. (Without a session, in the 2026-07-28 revision, a 404 is the server's answer.)
   */
  async #call(
    name: string,
    request: ToolCallRequest,
    controller: AbortController,
  ): Promise<McpCallResult> {
    const params = { name, arguments: request.arguments as Record<string, unknown> };
    // The SDK's own timeout stays out of the way: the deadline above decides.
    const options = { signal: controller.signal, timeout: 2 ** 31 - 1 };
    const client = await this.#connected(controller.signal);
    try {
      return (await client.callTool(params, options)) as McpCallResult;
    } catch (error) {
      const hadSession = client.getProtocolEra() === 'legacy';
      if (!hadSession || !sessionLost(error) || controller.signal.aborted) throw error;
      this.#dropClient(client);
      const fresh = await this.#connected(controller.signal);
      return (await fresh.callTool(params, options)) as McpCallResult;
    }
  }

  /** The connected client, connecting (again) when there is none. */
  #connected(signal: AbortSignal): Promise<Client> {
    if (this.#closed) return Promise.reject(new Error('the connection was closed'));
    if (!this.#client) {
      const connecting = this.#connect(signal);
      this.#client = connecting;
      // A failed connection is tried again by the next call.
      connecting.catch(() => {
        if (this.#client === connecting) this.#client = undefined;
      });
    }
    return this.#client;
  }

  async #connect(signal: AbortSignal): Promise<Client> {
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      // Not ajv (it compiles with `new Function`), and checked here within bounds.
      jsonSchemaValidator: UNCHECKED,
      versionNegotiation: { mode: negotiationMode(this.config.protocol) },
      // The listing's own cap: a server that never stops paging fails the listing.
      listMaxPages: MAX_LIST_PAGES,
    });
    const transport = new StreamableHTTPClientTransport(new URL(this.config.url), {
      requestInit: { headers: { ...this.config.headers } },
      fetch: transportFetch,
    });
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      void this.#refreshTools(client);
    });
    await client.connect(transport, { signal, timeout: 2 ** 31 - 1 });
    if (this.#closed) {
      await client.close();
      throw new Error('the connection was closed');
    }
    if (client.getProtocolEra() === 'modern') void this.#listenForChanges(client);
    return client;
  }

  /**
   * Without a session, list changes come on a `subscriptions/listen` stream, opened beside
   * the start (not waited for) when the server says its tool list can change. It gets no
   * signal: a call's or the start's would end the stream with them; only its acknowledgement
   * is bounded. A server that refuses it keeps the tools it listed.
   */
  async #listenForChanges(client: Client): Promise<void> {
    if (client.getServerCapabilities()?.tools?.listChanged !== true) return;
    const timeout = this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    try {
      const subscription = await client.listen({ toolsListChanged: true }, { timeout });
      if (this.#closed) {
        await subscription.close();
        return;
      }
      this.#subscription = subscription;
      void subscription.closed.then((reason) => {
        if (reason !== 'local') this.#relisten(client);
      });
    } catch {
      // The tools stay as listed; a call to one that is gone fails as the server answers it.
    }
  }

  /**
   * A listen stream the server or the network ended is opened again (the 2025 session's
   * stream is reconnected by the SDK), a few times, after the tools are listed again for
   * the changes missed while it was down.
   */
  #relisten(client: Client): void {
    if (this.#closed || this.#relistens >= MAX_RELISTENS) return;
    this.#relistens += 1;
    this.#subscription = undefined;
    this.#cancelRelisten = later(RELISTEN_DELAY_MS, () => {
      if (this.#closed) return;
      void this.#refreshTools(client);
      void this.#listenForChanges(client);
    });
  }

  #dropClient(client: Client): void {
    void client.close().catch(() => undefined);
    this.#client = undefined;
  }

  async #refreshTools(client: Client): Promise<void> {
    const timeoutMs = this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    try {
      const specs = await this.#listTools(client, AbortSignal.timeout(timeoutMs));
      if (!this.#closed) this.onToolsChanged?.(specs);
    } catch {
      // The previous list stays; a call to a tool that is gone fails as the server answers it.
    }
  }

  /** Reads every page of `tools/list` and makes the specs the model is offered. */
  async #listTools(client: Client, signal: AbortSignal): Promise<ToolSpec[]> {
    // Without a cursor the SDK reads every page (at most `listMaxPages`), never from its cache.
    const result = await client.listTools(undefined, {
      signal,
      timeout: 2 ** 31 - 1,
      cacheMode: 'refresh',
    });
    const listed = result.tools as ListedTool[];
    const { specs, served, dropped } = await offerTools(this.config, listed);
    this.#tools = served;
    this.#dropped = dropped;
    return specs;
  }
}

/** Why a call's signal was aborted: its deadline, or a cancel (run aborted, agent disposed). */
const DEADLINE = Symbol('deadline');
const CANCELLED = Symbol('cancelled');

function notServed(toolName: string): ToolFailure {
  return toolFailure('tool-not-found', `The MCP server no longer offers "${toolName}".`);
}

/**
 * A failed outcome when structured content does not fit the tool's output schema, or could
 * not be checked against it within bounds; undefined when it fits (or there is none to check).
 */
function checkedOutput(
  toolName: string,
  tool: ServedTool,
  result: McpCallResult,
): ToolFailure | undefined {
  if (!tool.checkOutput || result.isError === true || result.structuredContent === undefined) {
    return undefined;
  }
  const verdict = tool.checkOutput(result.structuredContent);
  switch (verdict.outcome) {
    case 'valid':
      return undefined;
    case 'invalid':
      return toolFailure(
        'tool-failed',
        `Tool "${toolName}" answered with structured content that does not fit its output schema: ${verdict.message}`,
      );
    case 'refused':
      return toolFailure(
        'tool-schema-refused',
        `The answer of tool "${toolName}" could not be checked against its output schema (${verdict.message}); it was withheld.`,
      );
  }
}
