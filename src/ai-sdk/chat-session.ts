import type { AgentRun } from '../page/agent-run';
import type { AgentEvent } from '../protocol/events';
import { EventChunkMapper } from './event-chunks';
import type { AirlockMessageMetadata } from './message-parts';

/** Something that watches every event of every run the transport starts (e.g. tracing). */
export interface RunObserver {
  /** Called once per run, before its first event; returns what receives its events. */
  startRun(): (event: AgentEvent) => void;
}

/** A run the transport shows: its events, their mapping, and who watches them. */
export interface Session {
  readonly run: AgentRun;
  events: AsyncIterator<AgentEvent>;
  readonly mapper: EventChunkMapper;
  readonly observe: (event: AgentEvent) => void;
  metadata: AirlockMessageMetadata;
  /** Resolves once the run's last event was read. */
  readonly ended: Promise<void>;
  readonly markEnded: () => void;
  /** True once the run's last event was read. */
  done: boolean;
  /** Called when the run pauses for approval or ends. */
  readonly idleWaiters: (() => void)[];
}

/** A session for a run that has just started, watched by `observer`. */
export function createSession(run: AgentRun, observer: RunObserver | undefined): Session {
  const observe = observer?.startRun() ?? (() => {});
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => {
    resolveEnded = resolve;
  });
  const session: Session = {
    run,
    events: run[Symbol.asyncIterator](),
    mapper: new EventChunkMapper(run.runId),
    observe,
    metadata: { runId: run.runId },
    ended,
    markEnded: () => {
      session.done = true;
      resolveEnded();
      notifyIdle(session);
    },
    done: false,
    idleWaiters: [],
  };
  return session;
}

/** Reads a run's remaining events (to its observer) until it ends. */
export async function drain(session: Session): Promise<void> {
  try {
    for (;;) {
      const next = await session.events.next();
      if (next.done) return;
      session.observe(next.value);
    }
  } finally {
    session.markEnded();
  }
}

/** Wakes whoever waits for the session to pause or end. */
export function notifyIdle(session: Session): void {
  for (const wake of session.idleWaiters.splice(0)) wake();
}

/** The events of `rest`, after one already taken from it. */
export function prepend(
  first: IteratorResult<AgentEvent>,
  rest: AsyncIterator<AgentEvent>,
): AsyncIterator<AgentEvent> {
  let taken = false;
  return {
    next: () => {
      if (taken) return rest.next();
      taken = true;
      return Promise.resolve(first);
    },
  };
}
