import type * as Comlink from 'comlink';
import type { ToolCallRequest, ToolCheck, ToolHost, ToolOutcome } from '../../protocol/tools';
import { TIMED_OUT, withDeadline } from './deadline';
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

  async check(request: ToolCallRequest, timeoutMs: number): Promise<ToolCheck> {
    const check = await withDeadline<ToolCheck>(this.#host.check(request), timeoutMs);
    return check === TIMED_OUT
      ? timedOut(request.toolName, timeoutMs, 'its approval rule did not answer')
      : check;
  }

  async execute(request: ToolCallRequest, timeoutMs: number): Promise<ToolOutcome> {
    const outcome = await withDeadline<ToolOutcome>(this.#host.execute(request), timeoutMs);
    if (outcome !== TIMED_OUT) return outcome;
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
}
