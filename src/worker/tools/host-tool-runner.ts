import type * as Comlink from 'comlink';
import type { ToolCallRequest, ToolHost } from '../../protocol/tools';
import { waitFor } from '../../timing/wait';
import { describeThrown } from '../../tools/run-tool';
import { toolFailure } from '../../tools/tool-failure';
import { type ToolRunner, timedOut } from './tool-runner';

/**
 * Runs tools through a host in a thread that cannot be killed: the page (over Comlink)
 * or the agent worker itself (built-in tools). The deadline is cooperative: the tool's
 * signal is aborted and its late result ignored.
 */
export class HostToolRunner implements ToolRunner {
  readonly #host: ToolHost | Comlink.Remote<ToolHost>;
  readonly #where: string;

  constructor(host: ToolHost | Comlink.Remote<ToolHost>, where: string) {
    this.#host = host;
    this.#where = where;
  }

  async check(request: ToolCallRequest, timeoutMs: number): Promise<unknown> {
    const check = await waitFor(
      this.#ask(request, () => this.#host.check(request)),
      { timeoutMs },
    );
    return check.outcome === 'settled'
      ? check.value
      : timedOut(request.toolName, timeoutMs, 'its schema or approval rule did not answer');
  }

  async execute(request: ToolCallRequest, timeoutMs: number): Promise<unknown> {
    const outcome = await waitFor(
      this.#ask(request, () => this.#host.execute(request)),
      { timeoutMs },
    );
    if (outcome.outcome === 'settled') return outcome.value;
    this.cancel(request.callId);
    return timedOut(
      request.toolName,
      timeoutMs,
      `its signal was aborted (${this.#where} cannot be killed)`,
    );
  }

  cancel(callId: string): void {
    // Best effort: if the host is gone there is nothing left to cancel.
    Promise.resolve(this.#host.cancel(callId)).catch(() => undefined);
  }

  /** The host's answer; a host that throws or cannot be reached is a failed call, never a rejection. */
  async #ask(request: ToolCallRequest, ask: () => Promise<unknown>): Promise<unknown> {
    try {
      return await ask();
    } catch (error) {
      return toolFailure(
        'tool-failed',
        `Tool "${request.toolName}" could not be run by ${this.#where}: ${describeThrown(error)}`,
      );
    }
  }
}
