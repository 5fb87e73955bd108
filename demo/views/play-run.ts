/**
 * Plays one run's events into the page: the conversation log, the run timeline, and the
 * approval dialog for calls that wait for the user.
 */
import { type AgentEvent, type AgentRun, type ErrorData, isAirlockError } from 'airlock-agents';
import type { ApprovalDialog } from './approval-dialog';
import type { TimelineRun } from './run-timeline';
import type { RunView } from './run-view';

/** Where the run's events go. */
export interface RunPlayers {
  readonly view: RunView;
  readonly timeline: TimelineRun;
  readonly approvals: ApprovalDialog;
  /** Called after each event (the page scrolls). */
  readonly afterEvent: () => void;
  /** Shown what the agent learnt from the run. */
  readonly learned?: (event: Extract<AgentEvent, { type: 'memory-learned' }>) => void;
}

/** Reads `run` to its end. Approval questions still open when it ends are withdrawn. */
export async function playRun(run: AgentRun, players: RunPlayers): Promise<void> {
  const { view, timeline, approvals } = players;
  const ended = new AbortController();
  try {
    for await (const event of run) {
      view.handle(event);
      timeline.handle(event);
      if (event.type === 'memory-learned') players.learned?.(event);
      players.afterEvent();
      if (event.type !== 'approval-request') continue;
      // Not awaited: other events (and other approval requests) keep coming meanwhile.
      void approvals
        .ask({ toolName: event.toolName, arguments: event.arguments }, ended.signal)
        .then((decision) => {
          if (decision === undefined) return;
          const taken = decision.approved
            ? run.approve(event.approvalId)
            : run.reject(event.approvalId, decision.reason);
          if (decision.approved) view.approved(event.callId);
          // A decision the agent worker refused would leave the run waiting for good: the
          // page says why and stops it.
          taken.catch((error: unknown) => {
            view.showError(failureOf(error));
            run.abort();
          });
        });
    }
  } catch (error) {
    // Runs report their failures as events; reaching this is a bug worth seeing on the page.
    const failure = failureOf(error);
    view.showError(failure);
    timeline.fail(failure);
  } finally {
    ended.abort();
  }
}

/** What the page shows of a failure: an Airlock error's code, or `internal-error`. */
function failureOf(error: unknown): ErrorData {
  if (isAirlockError(error)) return { code: error.code, message: error.message };
  return {
    code: 'internal-error',
    message: error instanceof Error ? error.message : String(error),
  };
}
