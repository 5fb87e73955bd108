import type { AgentEvent } from '../protocol/events';
import { EVENT_WINDOW, type PageToWorker, type WorkerToPage } from '../protocol/wire';
import type { ApprovalDecision } from './tools/approval-gate';

/** What the page can say on a run's port besides acknowledging events. */
export interface EventSinkHandlers {
  readonly onCancel: () => void;
  readonly onApproval: (callId: string, decision: ApprovalDecision) => void;
}

/**
 * The agent worker's end of a run's event port. `emit` resolves at once while fewer than
 * `EVENT_WINDOW` events await the page's acknowledgement, and waits otherwise; that wait
 * is the backpressure that keeps a slow page from growing memory without bound.
 */
export class EventSink {
  readonly #port: MessagePort;
  readonly #handlers: EventSinkHandlers;
  #inFlight = 0;
  #waitingForCredit: (() => void) | undefined;
  #closed = false;

  constructor(port: MessagePort, handlers: EventSinkHandlers) {
    this.#port = port;
    this.#handlers = handlers;
    port.onmessage = (message: MessageEvent<PageToWorker>) => this.#receive(message.data);
  }

  /** Sends one event, waiting for credit when the window is full. A no-op once closed. */
  async emit(event: AgentEvent): Promise<void> {
    while (this.#inFlight >= EVENT_WINDOW && !this.#closed) {
      await new Promise<void>((resolve) => {
        this.#waitingForCredit = resolve;
      });
    }
    if (this.#closed) return;
    this.#inFlight += 1;
    this.#port.postMessage({ kind: 'event', event } satisfies WorkerToPage);
  }

  /** Stops listening and closes the port; a pending `emit` returns. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#port.onmessage = null;
    this.#port.close();
    this.#release();
  }

  #receive(message: PageToWorker): void {
    if (message.kind === 'cancel') {
      this.#handlers.onCancel();
    } else if (message.kind === 'approval') {
      const reason = message.reason ?? 'No reason given.';
      this.#handlers.onApproval(
        message.callId,
        message.approved ? { approved: true } : { approved: false, reason },
      );
    } else {
      this.#inFlight = Math.max(0, this.#inFlight - message.count);
      this.#release();
    }
  }

  #release(): void {
    const release = this.#waitingForCredit;
    this.#waitingForCredit = undefined;
    release?.();
  }
}
