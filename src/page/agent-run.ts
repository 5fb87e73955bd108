import { AirlockError } from '../errors/airlock-error';
import type { AgentEvent, RunResult } from '../protocol/events';
import { EVENT_WINDOW, type PageToWorker, type WorkerToPage } from '../protocol/wire';

/** Credit is returned in batches smaller than the window, so the worker never stalls on a reader that keeps up. */
const ACK_BATCH = EVENT_WINDOW / 4;

/**
 * One run, seen from the page: an async iterable of its events (one reader), the
 * result, and abort. Events arrive on a port of the run's own; the worker sends at most
 * `EVENT_WINDOW` events ahead of what the reader has taken, so a slow reader slows
 * the run instead of growing this queue.
 */
export class AgentRun implements AsyncIterable<AgentEvent> {
  /** Identifies the run in its events and result. */
  readonly runId: string;
  readonly #port: MessagePort;
  readonly #queue: AgentEvent[] = [];
  readonly #result: Promise<RunResult>;
  readonly #onEnd: () => void;
  #resolveResult!: (result: RunResult) => void;
  #rejectResult!: (error: AirlockError) => void;
  #wakeReader: (() => void) | undefined;
  #ended = false;
  #iterated = false;
  /** Set once nobody will read the events: they are acknowledged and dropped on arrival. */
  #draining = false;
  #takenSinceAck = 0;

  /** @internal Created by `Agent.run`. */
  constructor(runId: string, port: MessagePort, onEnd: () => void) {
    this.runId = runId;
    this.#port = port;
    this.#onEnd = onEnd;
    this.#result = new Promise<RunResult>((resolve, reject) => {
      this.#resolveResult = resolve;
      this.#rejectResult = reject;
    });
    // A rejection the app never awaits must not surface as an unhandled rejection.
    this.#result.catch(() => {});
    port.onmessage = (message: MessageEvent<WorkerToPage>) => {
      for (const event of message.data.events) this.#receive(event);
    };
  }

  /**
   * Resolves with the run's result when it ends, or rejects with an `AirlockError`. If
   * nothing iterates the run by the next task, reading `result` consumes the events.
   */
  get result(): Promise<RunResult> {
    setTimeout(() => {
      if (!this.#iterated) this.#drain();
    }, 0);
    return this.#result;
  }

  /** Lets a call that raised `approval-request` run. */
  approve(callId: string): void {
    this.#post({ kind: 'approval', callId, approved: true });
  }

  /** Refuses a call that raised `approval-request`; the model is told, with `reason`, and the run goes on. */
  reject(callId: string, reason = 'The user declined.'): void {
    this.#post({ kind: 'approval', callId, approved: false, reason });
  }

  /** Asks the worker to stop the run; it ends with reason `aborted`. Idempotent. */
  abort(): void {
    if (!this.#ended) this.#post({ kind: 'cancel' });
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    if (this.#iterated) {
      throw new AirlockError(
        'invalid-usage',
        'A run can be iterated once; keep the events if you need them twice.',
      );
    }
    this.#iterated = true;
    return {
      next: () => this.#next(),
      // Breaking out of `for await` lands here: the reader is gone, so the run is cancelled.
      return: async () => {
        this.abort();
        this.#drain();
        return { done: true, value: undefined };
      },
    };
  }

  /** @internal Ends a run whose signal was aborted before it started, without asking the worker. */
  abortBeforeStart(model: string, conversationId: string): void {
    const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    this.#receive({ type: 'run-start', runId: this.runId, model });
    this.#receive({
      type: 'run-finish',
      runId: this.runId,
      conversationId,
      reason: 'aborted',
      text: '',
      steps: [],
      usage,
    });
  }

  /** @internal Ends the run from the page side (worker crash, dispose). */
  fail(error: AirlockError): void {
    if (this.#ended) return;
    this.#enqueue({ type: 'run-error', runId: this.runId, error: error.toData() });
    this.#end();
    this.#rejectResult(error);
  }

  async #next(): Promise<IteratorResult<AgentEvent>> {
    for (;;) {
      const event = this.#queue.shift();
      if (event) {
        this.#acknowledge(1);
        return { done: false, value: event };
      }
      if (this.#ended) return { done: true, value: undefined };
      await new Promise<void>((resolve) => {
        this.#wakeReader = resolve;
      });
    }
  }

  #receive(event: AgentEvent): void {
    if (this.#ended) return;
    if (this.#draining) this.#acknowledge(1);
    else this.#enqueue(event);
    if (event.type === 'run-finish') {
      const { type: _type, ...result } = event;
      this.#end();
      this.#resolveResult(result);
    } else if (event.type === 'run-error') {
      this.#end();
      this.#rejectResult(AirlockError.fromData(event.error));
    }
  }

  #enqueue(event: AgentEvent): void {
    this.#queue.push(event);
    this.#wake();
  }

  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    const dropped = this.#queue.length;
    this.#queue.length = 0;
    this.#acknowledge(dropped);
    this.#wake();
  }

  #acknowledge(count: number): void {
    this.#takenSinceAck += count;
    if (this.#takenSinceAck >= ACK_BATCH || (this.#draining && this.#takenSinceAck > 0)) {
      this.#post({ kind: 'ack', count: this.#takenSinceAck });
      this.#takenSinceAck = 0;
    }
  }

  #end(): void {
    this.#ended = true;
    this.#port.onmessage = null;
    this.#port.close();
    this.#wake();
    this.#onEnd();
  }

  #wake(): void {
    const wake = this.#wakeReader;
    this.#wakeReader = undefined;
    wake?.();
  }

  #post(message: PageToWorker): void {
    if (!this.#ended) this.#port.postMessage(message);
  }
}
