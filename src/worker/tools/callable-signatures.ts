import type { JsonSchema, ToolSpec } from '../../protocol/tools';

/** How deep a schema is rendered; deeper parts are `unknown` (the model has the tool's own schema too). */
const MAX_DEPTH = 4;

/**
 * The description of a tool that calls other tools (a code tool), with those tools listed
 * as the functions the script sees: `await tools.get_weather(args: { city: string })`,
 * each with its own description, argument types rendered from its JSON Schema.
 */
export function withCallableSignatures(spec: ToolSpec, callable: readonly ToolSpec[]): string {
  if (callable.length === 0) return spec.description;
  const lines = callable.map((tool) => {
    const summary = tool.description.split('\n')[0]?.trim() ?? '';
    const signature = `await tools.${tool.name}(args: ${typeOf(tool.parameters, 0)})`;
    return summary ? `- ${signature}: ${summary}` : `- ${signature}`;
  });
  return `${spec.description}\n\nFunctions the code can call (each returns the tool's output, or throws an Error whose \`code\` says why):\n${lines.join('\n')}`;
}

/** A TypeScript-like type for a JSON Schema; what it does not understand becomes `unknown`. */
function typeOf(schema: unknown, depth: number): string {
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return 'unknown';
  const node = schema as JsonSchema;
  if (Array.isArray(node.enum)) return node.enum.map((value) => JSON.stringify(value)).join(' | ');
  if ('const' in node) return JSON.stringify(node.const);
  const union = node.anyOf ?? node.oneOf;
  if (Array.isArray(union)) return union.map((member) => typeOf(member, depth + 1)).join(' | ');
  const type = node.type;
  // Each distinct type once: a list repeating `object` at every level (an MCP server writes
  // these schemas) would multiply the rendering at each level.
  if (Array.isArray(type))
    return [...new Set(type)].map((one) => typeOf({ ...node, type: one }, depth)).join(' | ');
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOf(node.items, depth + 1)}>`;
    case 'object': {
      const properties =
        typeof node.properties === 'object' && node.properties !== null
          ? (node.properties as Record<string, unknown>)
          : {};
      const required = new Set(Array.isArray(node.required) ? node.required : []);
      const fields = Object.entries(properties).map(
        ([key, value]) =>
          `${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}${required.has(key) ? '' : '?'}: ${typeOf(value, depth + 1)}`,
      );
      return fields.length > 0 ? `{ ${fields.join('; ')} }` : '{}';
    }
    default:
      return 'unknown';
  }
}
