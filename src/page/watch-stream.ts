import { AirlockError } from '../errors/airlock-error';
import type { AgentEvent } from '../protocol/events';
import type { PageToWatch, RelayAction, WatchToPage } from '../protocol/tab-relay';
import { EventQueue } from './event-queue';

/**
 * The most events a watch holds for a reader that does not keep up (or does not read):
 * older ones are dropped first. A watched run cannot be slowed by a tab that only watches.
 */
const MAX_UNREAD_EVENTS = 10_000;

/**
 * What `AgentWatch` does (see `agent-watch.ts`), loaded when the app first watches: reads
 * the watch's port and relays stops and decisions to the tab that runs the run.
 */
export class WatchStream implements AsyncIterable<AgentEvent> {
  /** The conversation watched. */
  readonly conversationId: string;
  readonly #port: MessagePort;
  readonly #onEnd: () => void;
  readonly #queue = new EventQueue<AgentEvent>();
  /** The run the last `run-start` named, while it has not ended. */
  #liveRun: string | undefined;
  /** Approval ids the watched runs asked for, with their run. */
  readonly #approvals = new Map<string, string>();
  readonly #answers = new Map<string, (error: AirlockError | undefined) => void>();
  #requests = 0;
  #overflowed = false;
  #ended = false;
  #markListening: () => void = () => {};
  /**
   * Resolves once the watch hears the conversation's relay: a run that starts from then on
   * is seen from its `run-start`; or once the watch ends. Never rejects.
   */
  readonly listening: Promise<void>;

  constructor(conversationId: string, port: MessagePort, onEnd: () => void) {
    this.conversationId = conversationId;
    this.#port = port;
    this.#onEnd = onEnd;
    this.listening = new Promise((resolve) => {
      this.#markListening = resolve;
    });
    port.onmessage = (message: MessageEvent<WatchToPage>) => {
      const data = message.data;
      if (data.kind === 'listening') {
        this.#markListening();
      } else if (data.kind === 'answer') {
        const settle = this.#answers.get(data.requestId);
        this.#answers.delete(data.requestId);
        settle?.(data.error ? AirlockError.fromData(data.error) : undefined);
      } else {
        for (const event of data.events) this.#receive(event);
      }
    };
  }

  /** The id of the watched run going on now, if one is. */
  get liveRunId(): string | undefined {
    return this.#liveRun;
  }

  /**
   * Stops a watched run (by the `runId` of its `run-start`): it ends with reason `aborted`,
   * as `run.abort()` ends it. Resolves once the tab running it took the stop; rejects with
   * `not-found` when no tab runs it.
   */
  stop(runId: string): Promise<void> {
    if (typeof runId !== 'string' || runId === '')
      return refused(
        new AirlockError('invalid-input', '`runId` must be the runId of a run-start event.', {
          details: { field: 'runId' },
        }),
      );
    return this.#control(runId, { action: 'stop' });
  }

  /**
   * Lets the call of a watched run's `approval-request` run (by its `approvalId`). Settles as
   * `run.approve` does: rejects with `approval-unknown` for an id no watched run asked for,
   * `approval-already-decided` for one already answered (here, by its own page or elsewhere).
   */
  approve(approvalId: string): Promise<void> {
    return this.#decide(approvalId, { action: 'approval', approvalId, approved: true });
  }

  /** Refuses the call of a watched run's `approval-request`; the model is told, with `reason`. */
  reject(approvalId: string, reason = 'The user declined.'): Promise<void> {
    return this.#decide(approvalId, { action: 'approval', approvalId, approved: false, reason });
  }

  /** Ends the watch: the iteration ends; the runs go on. Idempotent. */
  close(): void {
    if (this.#ended) return;
    this.#post({ kind: 'close' });
    // The worker closes the port when it reads `close`: closing it here could lose the message.
    this.#end(false);
  }

  /** Iterated once, by its `AgentWatch`, which refuses a second reader. */
  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    return {
      next: () => this.#queue.next(),
      // Breaking out of `for await` ends the watch, not the run it watches.
      return: async () => {
        this.close();
        return { done: true, value: undefined };
      },
    };
  }

  /** @internal Ends the watch from the page side (dispose, worker crash). */
  end(): void {
    this.#end(true);
  }

  #decide(approvalId: string, action: RelayAction): Promise<void> {
    const runId = typeof approvalId === 'string' ? this.#approvals.get(approvalId) : undefined;
    if (runId === undefined)
      return refused(
        new AirlockError(
          'approval-unknown',
          `No watched run asked for approval ${String(approvalId)}. Answer the approvalId of an approval-request event.`,
          { details: { approvalId } },
        ),
      );
    return this.#control(runId, action);
  }

  #control(runId: string, action: RelayAction): Promise<void> {
    if (this.#ended)
      return refused(
        new AirlockError('invalid-usage', 'This watch is closed; watch the conversation again.'),
      );
    this.#requests += 1;
    const requestId = String(this.#requests);
    const taken = new Promise<void>((resolve, reject) => {
      this.#answers.set(requestId, (error) => (error ? reject(error) : resolve()));
    });
    // An app that fires and forgets (a click handler) must not see an unhandled rejection.
    taken.catch(() => {});
    this.#post({ kind: 'control', requestId, runId, ...action });
    return taken;
  }

  #receive(event: AgentEvent): void {
    if (this.#ended) return;
    if (event.type === 'run-start') this.#liveRun = event.runId;
    if (event.type === 'approval-request' && this.#liveRun !== undefined)
      this.#approvals.set(event.approvalId, this.#liveRun);
    if (
      (event.type === 'run-finish' || event.type === 'run-error') &&
      event.runId === this.#liveRun
    ) {
      this.#liveRun = undefined;
      // A decision for a run that ended can only be refused: the ids are forgotten.
      for (const [approvalId, runId] of this.#approvals)
        if (runId === event.runId) this.#approvals.delete(approvalId);
    }
    if (this.#queue.length >= MAX_UNREAD_EVENTS) {
      this.#queue.dropOldest();
      if (!this.#overflowed) {
        this.#overflowed = true;
        this.#queue.push({
          type: 'warning',
          code: 'relay-message-dropped',
          message: `The watch held ${MAX_UNREAD_EVENTS} unread events; older ones were dropped.`,
        });
      }
    }
    this.#queue.push(event);
  }

  #end(closePort: boolean): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const settle of this.#answers.values())
      settle(new AirlockError('invalid-usage', 'The watch was closed before the answer came.'));
    this.#answers.clear();
    this.#port.onmessage = null;
    if (closePort) this.#port.close();
    this.#markListening();
    this.#queue.end();
    this.#onEnd();
  }

  #post(message: PageToWatch): void {
    if (!this.#ended) this.#port.postMessage(message);
  }
}

function refused(error: AirlockError): Promise<void> {
  const refusal = Promise.reject(error);
  refusal.catch(() => {});
  return refusal;
}
