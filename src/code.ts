/**
 * The code tool, for a tool worker entry of its own (its WebAssembly stays in that worker):
 * `import { codeTool } from 'airlock-agents/code'; serveTools([codeTool({ ... })]);`
 */
export { type CodeToolLimits, type CodeToolOptions, codeTool } from './code/code-tool';
export { ToolFault, type ToolFaultCode } from './tools/tool-fault';
