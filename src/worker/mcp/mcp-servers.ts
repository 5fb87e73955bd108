import type { McpServerConfig } from '../../protocol/mcp';
import type { ToolRegistry } from '../tools/tool-registry';
import { McpServerConnection } from './mcp-server-connection';

/**
 * Connects to an agent's MCP servers and adds their tools to the registry, keeping them
 * current when a server says its list changed. Loaded on demand: agents without MCP
 * servers never load the MCP SDK. Fails `mcp-unavailable` (naming the first server that
 * failed) after closing every connection it made.
 */
export async function connectMcpServers(
  configs: readonly McpServerConfig[],
  registry: ToolRegistry,
): Promise<McpServerConnection[]> {
  const connections = configs.map((config) => new McpServerConnection(config));
  const started = await Promise.allSettled(connections.map((connection) => connection.start()));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    await Promise.all(connections.map((connection) => connection.close()));
    throw failed.reason;
  }
  try {
    for (const [index, connection] of connections.entries()) {
      const result = started[index];
      if (result?.status !== 'fulfilled') continue;
      const where = `MCP server "${connection.config.name}"`;
      registry.add(result.value, connection, connection.timeoutMs, where);
      connection.onToolsChanged = (specs) =>
        registry.replace(connection, specs, connection.timeoutMs, where);
    }
  } catch (error) {
    // A name another tool already has: nothing of these servers is kept.
    await Promise.all(connections.map((connection) => connection.close()));
    throw error;
  }
  return connections;
}
