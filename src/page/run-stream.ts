import { AirlockError } from '../errors/airlock-error';
import { unpackDeltas } from '../protocol/delta-runs';
import type { AgentEvent, RunResult } from '../protocol/events';
import { EVENT_WINDOW, type PageToWorker, type WorkerToPage } from '../protocol/wire';
import { later } from '../timing/later';
import { formatIssues, type ToolSchema } from '../tools/standard-schema';
import { EventQueue } from './event-queue';

/** Credit is returned in batches smaller than the window, so the worker never stalls on a reader that keeps up. */
const ACK_BATCH = EVENT_WINDOW / 4;

/**
 * What `AgentRun` does (see `agent-run.ts`), loaded with the first run: reads the run's
 * port. Events arrive on a port of the run's own; the worker sends at most `EVENT_WINDOW`
 * events ahead of what the reader has taken, so a slow reader slows the run instead of
 * growing this queue.
 */
export class RunStream<Result extends RunResult = RunResult> {
  readonly runId: string;
  readonly #port: MessagePort;
  readonly #queue = new EventQueue<AgentEvent>();
  readonly #result: Promise<Result>;
  readonly #onEnd: () => void;
  /** The run's structured output schema, which checks the worker's answers here. */
  readonly #output: ToolSchema | undefined;
  /** The last answer the schema accepted, as the schema outputs it (transforms applied). */
  #validated: { readonly value: unknown } | undefined;
  #resolveResult!: (result: Result) => void;
  #rejectResult!: (error: AirlockError) => void;
  /** Set once nobody will read the events: they are acknowledged and dropped on arrival. */
  #draining = false;
  #takenSinceAck = 0;
  /** Approval ids this run asked for and no decision was sent for yet. */
  readonly #openApprovals = new Set<string>();
  /** Approval ids a decision was sent for: each request is answered once. */
  readonly #decidedApprovals = new Set<string>();
  /** Decisions sent, waiting for the worker to say whether it took them. */
  readonly #sentDecisions = new Map<string, (error: AirlockError | undefined) => void>();

  constructor(runId: string, port: MessagePort, onEnd: () => void, output?: ToolSchema) {
    this.runId = runId;
    this.#port = port;
    this.#onEnd = onEnd;
    this.#output = output;
    this.#result = new Promise<Result>((resolve, reject) => {
      this.#resolveResult = resolve;
      this.#rejectResult = reject;
    });
    // A rejection the app never awaits must not surface as an unhandled rejection.
    this.#result.catch(() => {});
    globalThis.addEventListener?.('online', this.#onOnline);
    port.onmessage = (message: MessageEvent<WorkerToPage>) => {
      const data = message.data;
      if (data.kind === 'approval-answer') {
        const settle = this.#sentDecisions.get(data.approvalId);
        this.#sentDecisions.delete(data.approvalId);
        settle?.(data.error ? AirlockError.fromData(data.error) : undefined);
      } else if (data.kind === 'output-check') {
        void this.#checkOutput(data.checkId, data.value);
      } else {
        unpackDeltas(data.events, this.#receiveOne);
      }
    };
  }

  /** Resolves with the run's result when it ends, or rejects with an `AirlockError`. */
  get result(): Promise<Result> {
    return this.#result;
  }

  /**
   * Lets the call of an `approval-request` run: pass the event's `approvalId`. Resolves
   * once the agent worker took the decision; rejects with `approval-unknown` for an id
   * this run never asked for and `approval-already-decided` for one already answered
   * (each request is answered once). Nothing needs to await it.
   */
  approve(approvalId: string): Promise<void> {
    return this.#decide({ kind: 'approval', approvalId, approved: true });
  }

  /**
   * Refuses the call of an `approval-request` (by its `approvalId`); the model is told,
   * with `reason`, and the run goes on. Settles as `approve` does.
   */
  reject(approvalId: string, reason = 'The user declined.'): Promise<void> {
    return this.#decide({ kind: 'approval', approvalId, approved: false, reason });
  }

  /** Asks the worker to stop the run; it ends with reason `aborted`. Idempotent. */
  abort(): void {
    if (!this.#queue.ended) this.#post({ kind: 'cancel' });
  }

  /** The next event for the run's one reader (its `AgentRun` refuses a second). */
  next(): Promise<IteratorResult<AgentEvent, undefined>> {
    return this.#queue.next(this.#takeOne);
  }

  /** The reader is gone (it broke out of `for await`): the run is cancelled and its events dropped. */
  leave(): void {
    this.abort();
    this.drain();
  }

  /** Nobody will read the events: they are acknowledged and dropped on arrival. */
  drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    this.#acknowledge(this.#queue.clear());
  }

  /** Drains the run in the next task unless `iterated` says by then that someone reads it. */
  drainUnless(iterated: () => boolean): void {
    later(0, () => {
      if (!iterated()) this.drain();
    });
  }

  /** Ends a run whose signal was aborted before it started, without asking the worker. */
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

  /** Ends the run from the page side (worker crash, dispose). */
  fail(error: AirlockError): void {
    if (this.#queue.ended) return;
    this.#queue.push({ type: 'run-error', runId: this.runId, error: error.toData() });
    this.#end();
    this.#rejectResult(error);
  }

  /** Validates a structured answer with the run's schema and tells the worker what is wrong, if anything. */
  async #checkOutput(checkId: string, value: unknown): Promise<void> {
    let issues: string | undefined;
    if (!this.#output) {
      issues = 'This run has no output schema.';
    } else {
      try {
        const validation = await this.#output['~standard'].validate(value);
        if (validation.issues) issues = formatIssues(validation.issues);
        else this.#validated = { value: validation.value };
      } catch (error) {
        issues = `The output schema failed: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    this.#post({ kind: 'output-verdict', checkId, ...(issues === undefined ? {} : { issues }) });
  }

  #decide(decision: Extract<PageToWorker, { kind: 'approval' }>): Promise<void> {
    const { approvalId } = decision;
    const refused = this.#refusal(approvalId);
    const taken = refused
      ? Promise.reject(refused)
      : new Promise<void>((resolve, reject) => {
          this.#openApprovals.delete(approvalId);
          this.#decidedApprovals.add(approvalId);
          this.#sentDecisions.set(approvalId, (error) => (error ? reject(error) : resolve()));
          this.#post(decision);
        });
    // An app that fires and forgets (a click handler) must not see an unhandled rejection.
    taken.catch(() => {});
    return taken;
  }

  /** Why the page already knows a decision for `approvalId` cannot be taken, if it does. */
  #refusal(approvalId: unknown): AirlockError | undefined {
    if (typeof approvalId !== 'string' || approvalId === '') {
      return new AirlockError(
        'invalid-input',
        '`approvalId` must be the approvalId of an approval-request event.',
        { details: { field: 'approvalId' } },
      );
    }
    if (this.#openApprovals.has(approvalId) && !this.#queue.ended) return undefined;
    if (this.#decidedApprovals.has(approvalId) || this.#openApprovals.has(approvalId)) {
      return new AirlockError(
        'approval-already-decided',
        `Approval ${approvalId} was already decided; a decision is used once.`,
        { details: { approvalId } },
      );
    }
    return new AirlockError(
      'approval-unknown',
      `This run has no approval request ${approvalId}. Answer the approvalId of an approval-request event.`,
      { details: { approvalId } },
    );
  }

  readonly #takeOne = () => this.#acknowledge(1);

  readonly #receiveOne = (event: AgentEvent) => this.#receive(event);

  #receive(event: AgentEvent): void {
    if (this.#queue.ended) return;
    if (event.type === 'approval-request') this.#openApprovals.add(event.approvalId);
    if (this.#draining) this.#acknowledge(1);
    else this.#queue.push(event);
    if (event.type === 'run-finish') {
      const { type: _type, output: _parsed, ...result } = event;
      this.#end();
      // The worker's `output` is the JSON it read; the app gets what its schema made of it.
      const output = this.#validated && event.output !== undefined ? this.#validated : undefined;
      this.#resolveResult({ ...result, ...(output ? { output: output.value } : {}) } as Result);
    } else if (event.type === 'run-error') {
      this.#end();
      this.#rejectResult(AirlockError.fromData(event.error));
    }
  }

  #acknowledge(count: number): void {
    this.#takenSinceAck += count;
    if (this.#takenSinceAck >= ACK_BATCH || (this.#draining && this.#takenSinceAck > 0)) {
      this.#post({ kind: 'ack', count: this.#takenSinceAck });
      this.#takenSinceAck = 0;
    }
  }

  #end(): void {
    this.#queue.end();
    // The worker answers a decision as soon as it reads it; none will come once the run is over.
    for (const [approvalId, settle] of this.#sentDecisions) {
      settle(
        new AirlockError(
          'approval-already-decided',
          `The run ended before it read the decision on approval ${approvalId}; the request ended with the run.`,
          { details: { approvalId } },
        ),
      );
    }
    this.#sentDecisions.clear();
    globalThis.removeEventListener?.('online', this.#onOnline);
    this.#port.onmessage = null;
    this.#port.close();
    this.#onEnd();
  }

  /** Forwards the page's `online` event: a run waiting for the network goes on at once. */
  readonly #onOnline = () => this.#post({ kind: 'online' });

  #post(message: PageToWorker): void {
    if (!this.#queue.ended) this.#port.postMessage(message);
  }
}
