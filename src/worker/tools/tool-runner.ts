import type { ToolCallRequest, ToolCheck, ToolOutcome } from '../../protocol/tools';

/**
 * How the agent worker reaches the code of a set of tools, whatever thread it is in.
 * Both calls honour a deadline and never reject.
 */
export interface ToolRunner {
  check(request: ToolCallRequest, timeoutMs: number): Promise<ToolCheck>;
  execute(request: ToolCallRequest, timeoutMs: number): Promise<ToolOutcome>;
  /** Asks the tool to stop (its AbortSignal fires); the run does not wait for it. */
  cancel(callId: string): void;
}

/** The failure a call that missed its deadline resolves to. */
export function timedOut(
  toolName: string,
  timeoutMs: number,
  what: string,
): ToolOutcome & { ok: false } {
  return {
    ok: false,
    error: {
      code: 'tool-timeout',
      message: `Tool "${toolName}" did not finish within ${timeoutMs} ms; ${what}.`,
    },
  };
}
