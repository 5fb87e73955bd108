/**
 * `airlock-agents/webmcp`: WebMCP (`document.modelContext`) on the page. A polyfill kept to
 * the draft's surface for browsers without it, an agent offered to the page's other agents
 * as a tool, and the page's registered tools as an agent's tools. An entry apart, so an app
 * that never uses WebMCP carries none of it.
 */

export {
  type ExposeOptions,
  exposeToWebMCP,
  type WebMCPAgentTool,
  type WebMCPApprovalRequest,
  type WebMCPExposure,
} from './webmcp/expose-agent';
export {
  type WebMCPToolApprovalRequest,
  WebMCPToolError,
  type WebMCPToolsExposure,
} from './webmcp/expose-tools';
export {
  type InstalledModelContext,
  installModelContext,
  type ModelContext,
  type ModelContextTool,
  type RegisteredTool,
  type RegisterToolOptions,
  type ToolAnnotations,
} from './webmcp/model-context';
export {
  type DroppedWebMCPTool,
  WEBMCP_TOOL_PREFIX,
  type WebMCPTools,
  type WebMCPToolsOptions,
  webmcpTools,
} from './webmcp/webmcp-tools';
