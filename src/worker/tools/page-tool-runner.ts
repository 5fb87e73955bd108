import type * as Comlink from 'comlink';
import type { ToolCallRequest, ToolCheck, ToolHost, ToolOutcome } from '../../protocol/tools';
import { TIMED_OUT, withDeadline } from './deadline';
import { type ToolRunner, timedOut } from './tool-runner';

/**
 * Runs page tools through the page's tool host. The page thread cannot be killed, so a
 * page tool's deadline is cooperative: its signal is aborted and its late result ignored.
 */
export class PageToolRunner implements ToolRunner {
  readonly #host: Comlink.Remote<ToolHost>;

  constructor(host: Comlink.Remote<ToolHost>) {
    this.#host = host;
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
      'its signal was aborted (page tools cannot be killed)',
    );
  }

  cancel(callId: string): void {
    // Best effort: if the page is gone there is nothing left to cancel.
    this.#host.cancel(callId).catch(() => undefined);
  }
}
