import { MCP_NAME_SEPARATOR } from '../../protocol/mcp';

/** The longest tool name function calling accepts. */
const MAX_TOOL_NAME_CHARS = 64;

/**
 * The names the model sees for a server's tools: `<server>__<tool>`. A server may name its
 * tools with characters function calling refuses, or at a length that does not fit beside
 * the server's name: those characters become `_`, and a name still too long is cut and
 * given a short hash of the original, so two long names never meet. Returns the exposed
 * name of each original name; an original is skipped when its exposed name is taken.
 */
export function exposedToolNames(server: string, tools: readonly string[]): Map<string, string> {
  const prefix = `${server}${MCP_NAME_SEPARATOR}`;
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const original of tools) {
    const safe = original.replace(/[^a-zA-Z0-9_-]/g, '_');
    let exposed = `${prefix}${safe}`;
    if (exposed.length > MAX_TOOL_NAME_CHARS || safe !== original) {
      const hash = shortHash(original);
      exposed = `${prefix}${safe.slice(0, MAX_TOOL_NAME_CHARS - prefix.length - hash.length - 1)}_${hash}`;
    }
    if (taken.has(exposed) || names.has(original)) continue;
    taken.add(exposed);
    names.set(original, exposed);
  }
  return names;
}

/** Six base-36 characters of FNV-1a: enough to keep apart the few names one server has. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36).padStart(6, '0').slice(-6);
}
