import type { ToolCallRequest, ToolCheck, ToolHost, ToolOutcome } from '../protocol/tools';
import type { Tool } from './define-tool';
import { checkTool, runTool } from './run-tool';
import { toolFailure } from './tool-failure';

/**
 * Runs tools in the thread that holds their code: the page for page tools, a tool
 * worker for sandboxed ones. Schemas and approval rules live here, with the code.
 */
export class LocalToolHost implements ToolHost {
  readonly #tools: ReadonlyMap<string, Tool>;
  readonly #running = new Map<string, AbortController>();

  constructor(tools: readonly Tool[]) {
    this.#tools = new Map(tools.map((tool) => [tool.name, tool]));
  }

  async check(request: ToolCallRequest): Promise<ToolCheck> {
    const tool = this.#tools.get(request.toolName);
    return tool ? checkTool(tool, request) : notHere(request.toolName);
  }

  /** Runs a call; `callTool` reaches the agent's other tools, for tools that declared some. */
  async execute(
    request: ToolCallRequest,
    callTool?: (toolName: string, args: unknown) => Promise<ToolOutcome>,
  ): Promise<ToolOutcome> {
    const tool = this.#tools.get(request.toolName);
    if (!tool) return notHere(request.toolName);
    const controller = new AbortController();
    this.#running.set(request.callId, controller);
    try {
      return await runTool(
        tool,
        request,
        controller.signal,
        tool.spec.callableTools?.length ? callTool : undefined,
      );
    } finally {
      this.#running.delete(request.callId);
    }
  }

  cancel(callId: string): void {
    this.#running.get(callId)?.abort();
  }

  /** Aborts every call still running (the agent was disposed). */
  cancelAll(): void {
    for (const controller of this.#running.values()) controller.abort();
  }
}

/** The failure of a call to a tool this host does not serve. */
function notHere(toolName: string) {
  return toolFailure('tool-not-found', `No tool named "${toolName}" is served here.`);
}
