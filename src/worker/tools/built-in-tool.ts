import type { ToolSpec } from '../../protocol/tools';
import { type Tool, type ToolDefinition, tool } from '../../tools/define-tool';
import type { ToolSchema } from '../../tools/standard-schema';

/** The built-in tools' specs by name: made by `tool()` the first time, then kept. */
const specs = new Map<string, ToolSpec>();

/**
 * `tool(definition)` for a built-in tool, which is made again for every run (its `execute`
 * is bound to the run) with the same name, description and parameters each time: the
 * definition is checked and its parameters' JSON Schema made once per name, not per run.
 */
export function builtInTool<S extends ToolSchema>(definition: ToolDefinition<S>): Tool<S> {
  const spec = specs.get(definition.name);
  if (spec) return { ...definition, spec };
  const made = tool(definition);
  specs.set(definition.name, made.spec);
  return made;
}
