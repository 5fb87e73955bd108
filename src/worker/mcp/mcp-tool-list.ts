import type { McpServerConfig } from '../../protocol/mcp';
import type { ToolSpec } from '../../protocol/tools';
import { exposedToolNames } from './mcp-names';
import { prepareSchemaCheck, type SchemaCheck } from './schema-check';

/** Default of `maxTools`: the most tools of one server offered to the model. */
export const DEFAULT_MAX_TOOLS = 100;
/** Default of `maxSchemaChars`: the most characters of descriptions and schemas of one server. */
export const DEFAULT_MAX_SCHEMA_CHARS = 200_000;
/** The longest description a server's tool may put in front of the model. */
const MAX_DESCRIPTION_CHARS = 2_000;
/** The most dropped tools a warning lists one by one (it counts them all). */
const MAX_DROPPED_LISTED = 100;
/** The most dropped tools a warning's message names. */
const MAX_DROPPED_NAMED = 20;

/** A tool as the server listed it. */
export interface ListedTool {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>> | undefined;
  readonly annotations?: { readonly readOnlyHint?: boolean | undefined } | undefined;
}

/** What one exposed tool maps to on the server. */
export interface ServedTool {
  readonly original: string;
  /** Checks a call's arguments against the tool's input schema. */
  readonly checkArguments: SchemaCheck;
  /** Checks structured content against the tool's output schema, when it has one. */
  readonly checkOutput?: SchemaCheck | undefined;
}

/**
 * Why a listed tool is not offered: past `maxTools`, past `maxSchemaChars`, or a schema
 * that cannot be checked within bounds (a pattern a linear-time engine cannot express, a
 * broken `$id`).
 */
export type DropReason = 'tool-count' | 'schema-size' | 'schema-refused';

/** A listed tool that is not offered, by its name on the server. */
export interface DroppedTool {
  readonly tool: string;
  readonly reason: DropReason;
}

/** The tools of one listing: offered (specs and what serves them) and dropped. */
export interface OfferedTools {
  readonly specs: ToolSpec[];
  readonly served: Map<string, ServedTool>;
  readonly dropped: Array<DroppedTool & { readonly detail: string }>;
}

/**
 * Turns a server's listing into the tools the model is offered. The app's allowlist first;
 * then, in the server's order, a tool is kept while the server's kept tools stay within
 * `maxTools` and their descriptions and schemas (as JSON) within `maxSchemaChars`, and only
 * if its schemas can be checked within bounds. The same listing always keeps the same tools.
 */
export async function offerTools(
  config: McpServerConfig,
  listed: readonly ListedTool[],
): Promise<OfferedTools> {
  const maxTools = config.maxTools ?? DEFAULT_MAX_TOOLS;
  const maxChars = config.maxSchemaChars ?? DEFAULT_MAX_SCHEMA_CHARS;
  const allowed = config.allowedTools && new Set(config.allowedTools);
  const offered = listed.filter((tool) => !allowed || allowed.has(tool.name));
  const names = exposedToolNames(
    config.name,
    offered.map((tool) => tool.name),
  );
  const served = new Map<string, ServedTool>();
  const specs: ToolSpec[] = [];
  const dropped: OfferedTools['dropped'] = [];
  let usedChars = 0;
  for (const tool of offered) {
    const exposed = names.get(tool.name);
    if (exposed === undefined || served.has(exposed)) continue;
    const { $schema: _dialect, ...parameters } = tool.inputSchema;
    const description = (tool.description ?? '').slice(0, MAX_DESCRIPTION_CHARS);
    if (served.size >= maxTools) {
      dropped.push({ tool: tool.name, reason: 'tool-count', detail: `over maxTools ${maxTools}` });
      continue;
    }
    const chars =
      description.length +
      JSON.stringify(parameters).length +
      (tool.outputSchema ? JSON.stringify(tool.outputSchema).length : 0);
    if (usedChars + chars > maxChars) {
      dropped.push({
        tool: tool.name,
        reason: 'schema-size',
        detail: `${chars} characters of description and schemas, over maxSchemaChars ${maxChars}`,
      });
      continue;
    }
    const input = await prepareSchemaCheck(parameters);
    const output = tool.outputSchema ? await prepareSchemaCheck(tool.outputSchema) : undefined;
    const refusal = !input.ok ? input.reason : output?.ok === false ? output.reason : undefined;
    if (!input.ok || refusal !== undefined) {
      dropped.push({ tool: tool.name, reason: 'schema-refused', detail: refusal ?? '' });
      continue;
    }
    usedChars += chars;
    served.set(exposed, {
      original: tool.name,
      checkArguments: input.check,
      ...(output?.ok ? { checkOutput: output.check } : {}),
    });
    specs.push({
      name: exposed,
      description,
      parameters: { ...parameters, type: 'object' },
      policy: {
        approval: approvalOf(config, tool),
        ...(config.maxOutputChars === undefined ? {} : { maxOutputChars: config.maxOutputChars }),
        // Conservative: any MCP tool may send data out, and its hints are not trusted.
        sink: 'always',
      },
      mcpServer: config.name,
    });
  }
  return { specs, served, dropped };
}

/** The `warning` a run starts with while some of a server's listed tools are not offered. */
export function droppedToolsWarning(
  server: string,
  dropped: OfferedTools['dropped'],
): { message: string; details: Readonly<Record<string, unknown>> } | undefined {
  if (dropped.length === 0) return undefined;
  const named = dropped
    .slice(0, MAX_DROPPED_NAMED)
    .map(({ tool, detail }) => `"${tool}" (${detail})`);
  const more = dropped.length - named.length;
  return {
    message: `The MCP server "${server}" listed tools that are not offered: ${named.join(', ')}${more > 0 ? `, and ${more} more` : ''}.`,
    details: {
      server,
      dropped: dropped.slice(0, MAX_DROPPED_LISTED).map(({ tool, reason }) => ({ tool, reason })),
      total: dropped.length,
    },
  };
}

/** A server's `readOnlyHint` lifts approval only where the app said it may. */
function approvalOf(config: McpServerConfig, tool: ListedTool): 'always' | 'never' {
  switch (config.approval ?? 'always') {
    case 'never':
      return 'never';
    case 'unless-read-only':
      return tool.annotations?.readOnlyHint === true ? 'never' : 'always';
    default:
      return 'always';
  }
}
