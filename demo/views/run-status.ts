/**
 * What a run's footer says, from the run's events: waiting for the model, the model
 * writing, running a tool, waiting for approval, or how the run ended, with the steps it
 * completed. Pure (no DOM), so every transition is tested without a page.
 */
import type { AgentEvent, RunResult } from 'airlock-agents';

/** A call in flight: its id and its tool's name. */
type Call = readonly [callId: string, toolName: string];

/** Where a run is, as its footer tells it. */
export interface RunStatus {
  /** The footer's text. */
  readonly text: string;
  /** The step under way, or the last one started (0 before the first). */
  readonly step: number;
  /** Calls running now. */
  readonly running: readonly Call[];
  /** Calls waiting for the user's approval. */
  readonly awaiting: readonly Call[];
  /** Set once `run-finish` or `run-error` arrived. */
  readonly ended: boolean;
}

/** What the page tells the status besides the run's events: the user approved a call. */
export interface CallApproved {
  readonly type: 'call-approved';
  readonly callId: string;
}

/** The status of a run that has reported nothing yet. */
export const STARTING_STATUS: RunStatus = {
  text: 'Waiting for the model…',
  step: 0,
  running: [],
  awaiting: [],
  ended: false,
};

/** The status after `event`. Events after the run's end change nothing. */
export function nextRunStatus(status: RunStatus, event: AgentEvent | CallApproved): RunStatus {
  if (status.ended) return status;
  const at = `Step ${status.step}`;
  switch (event.type) {
    case 'run-start':
      return { ...status, text: `Starting with ${event.model}…` };
    case 'step-start':
      return {
        ...status,
        step: event.step,
        running: [],
        awaiting: [],
        text: `Step ${event.step}: waiting for the model…`,
      };
    case 'rate-limit-wait':
      return {
        ...status,
        text: `${at}: waiting ${Math.ceil(event.waitMs / 1000)} s for the ${event.limit} rate limit…`,
      };
    case 'step-restarted':
      return { ...status, text: `${at}: the connection was lost; asking the model again…` };
    case 'text-delta':
    case 'text-rewrite':
      return { ...status, text: `${at}: the model is writing…` };
    case 'tool-call-start':
      return { ...status, text: `${at}: the model is writing a call to ${event.toolName}…` };
    case 'tool-call':
      return withCalls(
        status,
        [...status.running, [event.callId, event.toolName]],
        status.awaiting,
      );
    case 'approval-request':
      return withCalls(
        status,
        status.running.filter(([id]) => id !== event.callId),
        [...status.awaiting, [event.callId, event.toolName]],
      );
    case 'call-approved': {
      const call = status.awaiting.find(([id]) => id === event.callId);
      if (!call) return status;
      return withCalls(
        status,
        [...status.running, call],
        status.awaiting.filter(([id]) => id !== event.callId),
      );
    }
    case 'tool-result':
      return withCalls(
        status,
        status.running.filter(([id]) => id !== event.callId),
        status.awaiting.filter(([id]) => id !== event.callId),
      );
    case 'step-finish':
      return { ...status, running: [], awaiting: [], text: `Step ${event.step} done…` };
    case 'run-finish':
      return {
        ...status,
        running: [],
        awaiting: [],
        ended: true,
        text: finishedText(event, status.step),
      };
    case 'run-error':
      return { ...status, running: [], awaiting: [], ended: true, text: 'The run failed.' };
    default:
      return status;
  }
}

/**
 * How a run ended, honestly counted: `steps` holds only the completed steps, so a run
 * stopped while its first step streamed completed none, though it used tokens.
 * `startedStep` is the last step the run started (from its `step-start` events).
 */
export function finishedText(result: RunResult, startedStep: number): string {
  const done = result.steps.length;
  const tokens = `${result.usage.estimated ? 'about ' : ''}${result.usage.totalTokens} tokens`;
  switch (result.reason) {
    case 'stop':
      return `${count(done)} · ${tokens} · finished`;
    case 'max-steps':
      return `${count(done)} · ${tokens} · stopped at the step limit`;
    case 'aborted':
      if (startedStep > done) {
        return `Stopped during step ${startedStep} · ${count(done)} completed · ${tokens}`;
      }
      if (done === 0) return `Stopped before the model was asked · ${tokens}`;
      return `Stopped after ${count(done)} · ${tokens}`;
  }
}

/** The text for the calls in flight of the current step. */
function withCalls(
  status: RunStatus,
  running: readonly Call[],
  awaiting: readonly Call[],
): RunStatus {
  const parts = [
    ...(running.length > 0 ? [`running ${names(running)}`] : []),
    ...(awaiting.length > 0 ? [`waiting for your approval of ${names(awaiting)}`] : []),
  ];
  const doing = parts.length > 0 ? parts.join('; ') : 'finishing the step';
  return { ...status, running, awaiting, text: `Step ${status.step}: ${doing}…` };
}

/** Tool names, each once: "get_weather, calculate". */
function names(calls: readonly Call[]): string {
  return [...new Set(calls.map(([, toolName]) => toolName))].join(', ');
}

function count(steps: number): string {
  return `${steps} ${steps === 1 ? 'step' : 'steps'}`;
}
