/**
 * What a tool worker entry calls. The entry is the app's own file, so bundlers see it:
 * `import { serveTools } from 'airlock-agents/sandbox'; serveTools(() => import('./tools').then((module) => module.tools));`
 */
export { serveTools, type ToolLoader } from './sandbox/serve-tools';
export { type Tool, type ToolContext, type ToolDefinition, tool } from './tools/define-tool';
export {
  type FunctionTool,
  type FunctionToolOptions,
  type ToolOutput,
  toolFromFunction,
} from './tools/tool-from-function';
