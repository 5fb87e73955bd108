import { type Tool, tool } from '../tools/define-tool';
import type { ToolSchema } from '../tools/standard-schema';
import { type DropReason, type ListedTool, offerTools } from '../worker/mcp/mcp-tool-list';
import type { SchemaCheck } from '../worker/mcp/schema-check';
import { type ModelContext, type RegisteredTool, requireModelContext } from './model-context';

/** The prefix of WebMCP tools' names as the model sees them: `webmcp__<name>`. */
export const WEBMCP_TOOL_PREFIX = 'webmcp';

/** Options of `webmcpTools`. */
export interface WebMCPToolsOptions {
  /** The context to list (default `document.modelContext`, native or polyfilled). */
  readonly modelContext?: ModelContext;
  /** The registered names to offer (default: every listed tool). */
  readonly tools?: readonly string[];
  /**
   * Origins besides the page's own whose tools (registered in frames and exposed to the
   * page with `exposedTo`) are offered. Default none: only the page's own origin.
   */
  readonly origins?: readonly string[];
  /**
   * `always` (default): every call waits for `run.approve`, whatever the tool's annotations
   * say; `never`: the app vouches for every tool the page registers. A `readOnlyHint` is a
   * hint of the page's scripts and never lifts approval.
   */
  readonly approval?: 'always' | 'never';
  /** A call's deadline in ms (default 30 000); a tool that never settles fails `tool-timeout`. */
  readonly timeoutMs?: number;
  /** The longest output the model is shown per call (default 20 000). */
  readonly maxOutputChars?: number;
  /** The most tools offered (default 100). */
  readonly maxTools?: number;
  /** The most characters the offered descriptions and schemas take together (default 200 000). */
  readonly maxSchemaChars?: number;
}

/** A registered tool that is not offered, and why. */
export interface DroppedWebMCPTool {
  readonly tool: string;
  readonly origin: string;
  readonly reason: DropReason | 'duplicate-name' | 'origin-not-allowed' | 'malformed';
}

/** What `webmcpTools` found: tools for `createAgent({ tools })`, and those it left out. */
export interface WebMCPTools {
  readonly tools: Tool[];
  readonly dropped: DroppedWebMCPTool[];
}

/**
 * Lists the tools the page (and its same-origin or opted-in frames) registered with WebMCP
 * and makes them page tools of an agent, named `webmcp__<name>`. They are the app's to
 * govern like its own: approval by `approval` (default always), every one a sink, their
 * output labelled `untrusted` (the flow policy's input), arguments checked against the
 * registered schema in bounded time (the MCP tools' check: a huge or exponential schema is
 * dropped or refused, never a frozen thread), a deadline per call. The list is taken once:
 * call it again after a `toolchange` for a new agent.
 */
export async function webmcpTools(options: WebMCPToolsOptions = {}): Promise<WebMCPTools> {
  const context = requireModelContext(options.modelContext);
  const origins = new Set([window.origin, ...(options.origins ?? [])]);
  const wanted = options.tools && new Set(options.tools);
  const dropped: DroppedWebMCPTool[] = [];
  const visible: RegisteredTool[] = [];
  const listing: unknown = await context.getTools();
  // A page script may have replaced the context: what it lists is checked like any input.
  for (const registered of Array.isArray(listing) ? (listing as unknown[]) : []) {
    if (!wellFormed(registered)) {
      const named = (registered as { name?: unknown } | null)?.name;
      dropped.push({ tool: String(named).slice(0, 128), origin: '', reason: 'malformed' });
      continue;
    }
    const { name, origin } = registered;
    if (wanted && !wanted.has(name)) continue;
    if (origins.has(origin)) visible.push(registered);
    else dropped.push({ tool: name, origin, reason: 'origin-not-allowed' });
  }
  const counts = new Map<string, number>();
  for (const { name } of visible) counts.set(name, (counts.get(name) ?? 0) + 1);
  const byName = new Map<string, RegisteredTool>();
  for (const registered of visible) {
    const { name, origin } = registered;
    // Two documents may register one name: neither is taken, as the model could not tell them apart.
    if ((counts.get(name) ?? 0) > 1) dropped.push({ tool: name, origin, reason: 'duplicate-name' });
    else byName.set(name, registered);
  }
  const listed: ListedTool[] = [...byName.values()].map((registered) => ({
    name: registered.name,
    description: registered.description,
    inputSchema: schemaObject(registered.inputSchema),
  }));
  const offered = await offerTools(
    {
      name: WEBMCP_TOOL_PREFIX,
      url: location.href,
      approval: options.approval ?? 'always',
      ...(options.maxTools === undefined ? {} : { maxTools: options.maxTools }),
      ...(options.maxSchemaChars === undefined ? {} : { maxSchemaChars: options.maxSchemaChars }),
    },
    listed,
  );
  for (const { tool: name, reason } of offered.dropped) {
    dropped.push({ tool: name, origin: byName.get(name)?.origin ?? '', reason });
  }
  const tools = offered.specs.map((spec) => {
    const served = offered.served.get(spec.name);
    const registered = served && byName.get(served.original);
    if (!served || !registered) throw new Error(`No listing for ${spec.name}.`);
    return tool({
      name: spec.name,
      description: spec.description,
      parameters: checkedSchema(spec.parameters, served.checkArguments),
      needsApproval: spec.policy.approval === 'always',
      // Any page tool may send data out, and its annotations are not trusted.
      sink: true,
      outputLabel: { integrity: 'untrusted', confidentiality: 'public' },
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.maxOutputChars === undefined ? {} : { maxOutputChars: options.maxOutputChars }),
      execute: async (args, { signal }) => {
        const text = await context.executeTool(registered, args as object, { signal });
        return text === null ? '' : (JSON.parse(text) as unknown);
      },
    });
  });
  return { tools, dropped };
}

/** A listed tool with the fields and the name rules of the draft. */
function wellFormed(value: unknown): value is RegisteredTool {
  if (typeof value !== 'object' || value === null) return false;
  const { name, description, origin, inputSchema } = value as Record<string, unknown>;
  return (
    typeof name === 'string' &&
    /^[A-Za-z0-9_.-]{1,128}$/.test(name) &&
    typeof description === 'string' &&
    typeof origin === 'string' &&
    (inputSchema === undefined || (typeof inputSchema === 'object' && inputSchema !== null))
  );
}

/** A registered schema as an object schema; a tool without one takes no arguments. */
function schemaObject(schema: object | undefined): Readonly<Record<string, unknown>> {
  if (schema === undefined || Array.isArray(schema)) return { type: 'object', properties: {} };
  return schema as Readonly<Record<string, unknown>>;
}

/** A Standard Schema over a registered JSON Schema, checked by the MCP tools' bounded check. */
function checkedSchema(parameters: Readonly<Record<string, unknown>>, check: SchemaCheck) {
  const schema: ToolSchema<Record<string, unknown>> = {
    '~standard': {
      version: 1,
      vendor: 'airlock-webmcp',
      validate: (value) => {
        const verdict = check(value);
        return verdict.outcome === 'valid'
          ? { value: value as Record<string, unknown> }
          : { issues: [{ message: verdict.message }] };
      },
      jsonSchema: { input: () => ({ ...parameters }) },
    },
  };
  return schema;
}
