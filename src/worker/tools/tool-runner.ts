import type { ToolCallRequest, ToolOutcome } from '../../protocol/tools';
import { toolFailure } from '../../tools/tool-failure';

/** The run and conversation a call belongs to: what decides which tool workers may serve it. */
export interface CallScope {
  readonly runId: string;
  readonly conversationId: string;
}

/**
 * How the agent worker reaches the code of a set of tools, whatever thread it is in.
 * Runners deliver answers as they got them (`unknown`): the caller judges them with
 * `acceptCheck`/`acceptOutcome`, since no thread a tool's code runs in is trusted. Both
 * calls honour a deadline and never reject.
 */
export interface ToolRunner {
  /** Validates the arguments and, for a rule of the arguments, evaluates it; where no tool code runs. */
  check(request: ToolCallRequest, timeoutMs: number): Promise<unknown>;
  /** Runs a call; tools it asks for while it runs (a code tool's) go to `onToolCall`. */
  execute(
    request: ToolCallRequest,
    timeoutMs: number,
    scope: CallScope,
    onToolCall?: (toolName: string, args: unknown) => Promise<ToolOutcome>,
  ): Promise<unknown>;
  /** Asks the tool to stop (its AbortSignal fires); the run does not wait for it. */
  cancel(callId: string, scope: CallScope): void;
  /** The run ended: whatever served it alone may go. */
  endRun?(scope: CallScope): void;
}

/** The failure a call that missed its deadline resolves to. */
export function timedOut(
  toolName: string,
  timeoutMs: number,
  what: string,
): ToolOutcome & { ok: false } {
  return toolFailure(
    'tool-timeout',
    `Tool "${toolName}" did not finish within ${timeoutMs} ms; ${what}.`,
  );
}
