import type { ToolCallRequest, ToolHost, ToolOutcome } from '../protocol/tools';
import type { Tool } from '../tools/define-tool';
import { runTool } from '../tools/run-tool';

/**
 * Runs page tools for the agent worker. The worker has already checked that the tool
 * exists and that the arguments are JSON; schemas live here, with the code.
 */
export class PageToolHost implements ToolHost {
  readonly #tools: ReadonlyMap<string, Tool>;
  readonly #running = new Map<string, AbortController>();

  constructor(tools: readonly Tool[]) {
    this.#tools = new Map(tools.map((tool) => [tool.name, tool]));
  }

  async execute(request: ToolCallRequest): Promise<ToolOutcome> {
    const tool = this.#tools.get(request.toolName);
    if (!tool) {
      return {
        ok: false,
        error: { code: 'tool-not-found', message: `No page tool is named "${request.toolName}".` },
      };
    }
    const controller = new AbortController();
    this.#running.set(request.callId, controller);
    try {
      return await runTool(tool, request, controller.signal);
    } finally {
      this.#running.delete(request.callId);
    }
  }

  cancel(callId: string): void {
    this.#running.get(callId)?.abort();
  }

  /** Aborts every call still running (the run ended or the agent was disposed). */
  cancelAll(): void {
    for (const controller of this.#running.values()) controller.abort();
  }
}
