import type { ToolCallRequest, ToolCheck, ToolHost, ToolOutcome } from '../protocol/tools';
import { loadChunk } from '../runtime/load-chunk';
import type { Tool } from '../tools/define-tool';
import type { LocalToolHost } from '../tools/local-tool-host';
import { toolCancelled } from '../tools/tool-cancelled';
import type { ToolFailure } from '../tools/tool-failure';

/**
 * The page tools' host. Checking and running tools loads with a dynamic `import()` when
 * the agent is created with page tools (long before the model can call one), so an agent
 * without page tools never loads it and the page entry stays small.
 */
export class PageToolHost implements ToolHost {
  readonly #host: Promise<LocalToolHost | ToolFailure> | undefined;
  /** Calls cancelled before the host loaded: they must not start once it has. */
  readonly #cancelled = new Set<string>();
  #cancelledAll = false;
  #loaded: LocalToolHost | undefined;

  constructor(tools: readonly Tool[]) {
    this.#host =
      tools.length === 0
        ? undefined
        : loadChunk('local-tool-host', () => import('../tools/local-tool-host')).then(
            ({ LocalToolHost }) => {
              this.#loaded = new LocalToolHost(tools);
              return this.#loaded;
            },
            // A chunk that failed to load fails each call as data: a host never rejects.
            (error: unknown): ToolFailure => ({
              ok: false,
              error: {
                code: 'tool-crashed',
                message: `The page tools could not load: ${error instanceof Error ? error.message : String(error)}`,
              },
            }),
          );
  }

  async check(request: ToolCallRequest): Promise<ToolCheck> {
    const host = await this.#hostFor(request);
    return 'check' in host ? host.check(request) : host;
  }

  async execute(
    request: ToolCallRequest,
    callTool?: (toolName: string, args: unknown) => Promise<ToolOutcome>,
  ): Promise<ToolOutcome> {
    const host = await this.#hostFor(request);
    if (!('execute' in host)) return host;
    if (this.#cancelledAll || this.#cancelled.delete(request.callId)) {
      return toolCancelled(request.toolName);
    }
    return host.execute(request, callTool);
  }

  cancel(callId: string): void {
    if (this.#loaded) this.#loaded.cancel(callId);
    else if (this.#host) this.#cancelled.add(callId);
  }

  /** Aborts every call still running, and any waiting for the host (the agent was disposed). */
  cancelAll(): void {
    this.#cancelledAll = true;
    this.#loaded?.cancelAll();
  }

  async #hostFor(request: ToolCallRequest): Promise<LocalToolHost | ToolFailure> {
    return (
      // This failure and the one above are written out, not toolFailure(): the page entry is
      // a byte smaller so (npm run size).
      (await this.#host) ?? {
        ok: false,
        error: {
          code: 'tool-not-found',
          message: `No tool named "${request.toolName}" is served here.`,
        },
      }
    );
  }
}
