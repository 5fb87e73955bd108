import type { AgentRun } from '../page/agent-run';
import type { AgentEvent, RunResult } from '../protocol/events';

/** An approval a run started for a WebMCP caller asks for, as the app's handler sees it. */
export type WebMCPApprovalRequest = Extract<AgentEvent, { type: 'approval-request' }> & {
  /** Always `webmcp`: an agent on the page started the run, not the user nor the model. */
  readonly caller: 'webmcp';
};

/** The app's answer to one approval: `true` approves; `false` or a throw rejects the call. */
export type WebMCPApprovalHandler = (request: WebMCPApprovalRequest) => boolean | Promise<boolean>;

const RUN_ENDED = Symbol('run ended');

/**
 * Reads `run` to its end, answering each approval it asks for with the app's `onApproval`,
 * never the caller's word, and resolves with its result.
 */
export async function withAppApprovals<Result extends RunResult>(
  run: AgentRun<Result>,
  onApproval: WebMCPApprovalHandler,
): Promise<Result> {
  // The run can end while the app still asks its user (the agent disposed): the caller then
  // hears the run's end at once, not whenever (if ever) the app's handler answers.
  const ended = run.result.then(
    (): typeof RUN_ENDED => RUN_ENDED,
    (): typeof RUN_ENDED => RUN_ENDED,
  );
  for await (const event of run) {
    if (event.type !== 'approval-request') continue;
    // A handler that throws has decided too: the call is rejected with its reason.
    const asked = Promise.resolve()
      .then(() => onApproval({ ...event, caller: 'webmcp' }))
      .then(
        (approved) => (approved === true ? undefined : 'Not approved for an agent on the page.'),
        (error: unknown) =>
          `Not approved: ${error instanceof Error ? error.message : String(error)}`,
      );
    const decision = await Promise.race([asked, ended]);
    if (decision === RUN_ENDED) break;
    if (decision === undefined) await run.approve(event.approvalId);
    else await run.reject(event.approvalId, decision);
  }
  return run.result;
}
