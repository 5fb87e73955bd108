// The agent worker's end of a run's event port: events out in order with backpressure, cancel
// and approval decisions in.

import { z } from 'zod/mini';
import { toErrorData } from '../../errors/airlock-error';
import { safeParse } from '../../errors/schema-issues';
import { packDeltas } from '../../protocol/delta-runs';
import type { AgentEvent } from '../../protocol/events';
import { EVENT_WINDOW, type PageToWorker, type WorkerToPage } from '../../protocol/wire';
import { inNextTask } from '../../runtime/next-task';
import { type Cancel, later } from '../../timing/later';
import type { ApprovalDecision } from '../tools/approval-gate';

/** What the page can say on a run's port besides acknowledging events. */
export interface EventSinkHandlers {
  readonly onCancel: () => void;
  /** Applies a decision; throws an `AirlockError` to refuse it (unknown or already decided). */
  readonly onApproval: (approvalId: string, decision: ApprovalDecision) => void;
  /** The page's `online` event (see `PageToWorker`). */
  readonly onOnline?: () => void;
}

/**
 * Once a run's deltas stream, its batches of deltas go out at most this often: at the
 * speed of a fast stream the page then gets one message per interval, not one per network
 * read, and the wait stays well under a frame (16.7 ms). A delta that comes later than
 * this after the last message goes at once; any other event goes in the next task.
 */
export const STREAM_FLUSH_INTERVAL_MS = 8;

const isDelta = (event: AgentEvent) =>
  event.type === 'text-delta' ||
  event.type === 'reasoning-delta' ||
  event.type === 'tool-call-delta' ||
  event.type === 'output-delta';

/** The most characters of a rejection reason passed on to the model. */
const MAX_REASON_CHARS = 2_000;

/** The most characters of an output verdict's issues passed on to the model. */
const MAX_ISSUES_CHARS = 2_000;

/** The page's verdict on a structured answer: `issues` when it does not fit the schema. */
export interface OutputVerdict {
  readonly issues?: string;
}

/** What the page may post on a run's port; anything else is ignored, never thrown on. */
const pageMessageSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('ack'), count: z.int().check(z.gte(1), z.lte(EVENT_WINDOW)) }),
  z.object({ kind: z.literal('cancel') }),
  z.object({ kind: z.literal('online') }),
  z.object({
    kind: z.literal('approval'),
    approvalId: z.string().check(z.minLength(1), z.maxLength(200)),
    approved: z.boolean(),
    reason: z.exactOptional(z.string().check(z.maxLength(MAX_REASON_CHARS))),
  }),
  z.object({
    kind: z.literal('output-verdict'),
    checkId: z.string().check(z.minLength(1), z.maxLength(200)),
    // Cut rather than refused: a verdict that is ignored would leave the run waiting.
    issues: z.exactOptional(
      z.pipe(
        z.string(),
        z.transform((issues) => issues.slice(0, MAX_ISSUES_CHARS)),
      ),
    ),
  }),
]) satisfies z.ZodMiniType<PageToWorker, unknown>;

/**
 * The agent worker's end of a run's event port. `emit` resolves at once while fewer than
 * `EVENT_WINDOW` events await the page's acknowledgement, and waits otherwise; that wait
 * is the backpressure that keeps a slow page from growing memory without bound.
 *
 * Events emitted in one task go out as one message at the start of the next: a network
 * read of many stream chunks costs the page one message event and one structured clone,
 * not one per delta. A delta goes at once, with the events batched before it, when it
 * is the run's first (its first text) or comes `STREAM_FLUSH_INTERVAL_MS` after the last
 * message; later deltas wait until that interval has passed, gathering the reads in between.
 */
export class EventSink {
  readonly #port: MessagePort;
  readonly #handlers: EventSinkHandlers;
  #batch: AgentEvent[] = [];
  /** A flush asked for in the next task (`inNextTask`). */
  #flushScheduled = false;
  readonly #flushInNextTask = () => this.#flush();
  /** A held flush of deltas, when one waits for the interval. */
  #cancelHeldFlush: Cancel | undefined;
  #lastFlushAt = 0;
  #deltaSent = false;
  #inFlight = 0;
  #waitingForCredit: (() => void) | undefined;
  /** Output checks sent to the page, waiting for its verdict. */
  readonly #checks = new Map<string, (verdict: OutputVerdict | undefined) => void>();
  #checkCount = 0;
  #closed = false;

  constructor(port: MessagePort, handlers: EventSinkHandlers) {
    this.#port = port;
    this.#handlers = handlers;
    port.onmessage = (message: MessageEvent<unknown>) => {
      const parsed = safeParse(pageMessageSchema, message.data);
      // A message that is not one of the three cannot mean anything to the run.
      if (parsed.success) this.#receive(parsed.data);
    };
  }

  /** Sends one event, waiting for credit when the window is full. A no-op once closed. */
  async emit(event: AgentEvent): Promise<void> {
    while (this.#inFlight >= EVENT_WINDOW && !this.#closed) {
      // Deltas held for the interval go now: the page cannot acknowledge what it never got.
      if (this.#cancelHeldFlush) this.#flush();
      await new Promise<void>((resolve) => {
        this.#waitingForCredit = resolve;
      });
    }
    if (this.#closed) return;
    this.#inFlight += 1;
    this.#batch.push(event);
    if (isDelta(event)) {
      const now = performance.now();
      const holdMs = this.#lastFlushAt + STREAM_FLUSH_INTERVAL_MS - now;
      if (this.#deltaSent && holdMs > 0) {
        if (!this.#flushScheduled) this.#cancelHeldFlush ??= later(holdMs, () => this.#flush());
        return;
      }
      // A delta that is due goes now, with what was batched before it: a read holding many
      // chunks is worked through in one run of microtasks, and the next task would come
      // only after all of them. The run's first delta always goes so.
      this.#deltaSent = true;
      this.#flush(now);
      return;
    }
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    inNextTask(this.#flushInNextTask);
  }

  /**
   * Asks the page whether `value` fits the run's output schema. Resolves with the verdict,
   * or undefined if the port closed first. A verdict for no check it sent is ignored.
   */
  checkOutput(value: unknown): Promise<OutputVerdict | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    this.#checkCount += 1;
    const checkId = String(this.#checkCount);
    return new Promise((resolve) => {
      this.#checks.set(checkId, resolve);
      // After the events of this step, so the page has seen the answer it is asked about.
      this.#flush();
      this.#port.postMessage({ kind: 'output-check', checkId, value } satisfies WorkerToPage);
    });
  }

  /** Sends what is batched, stops listening and closes the ports; a pending `emit` returns. */
  close(): void {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    this.#port.onmessage = null;
    this.#port.close();
    this.#release();
    for (const settle of this.#checks.values()) settle(undefined);
    this.#checks.clear();
  }

  /** Posts what is batched, in one message. On the path of every streamed delta: kept lean. */
  #flush(now = performance.now()): void {
    this.#flushScheduled = false;
    this.#cancelHeldFlush?.();
    this.#cancelHeldFlush = undefined;
    const events = this.#batch;
    if (this.#closed || events.length === 0) return;
    this.#batch = [];
    this.#lastFlushAt = now;
    // A lone event (a slow stream's delta) has nothing to pack.
    this.#port.postMessage({
      kind: 'events',
      events: events.length === 1 ? events : packDeltas(events),
    } satisfies WorkerToPage);
  }

  #receive(message: PageToWorker): void {
    if (message.kind === 'cancel') {
      this.#handlers.onCancel();
    } else if (message.kind === 'online') {
      this.#handlers.onOnline?.();
    } else if (message.kind === 'approval') {
      const { approvalId } = message;
      const reason = message.reason ?? 'No reason given.';
      let answer: WorkerToPage = { kind: 'approval-answer', approvalId };
      try {
        this.#handlers.onApproval(
          approvalId,
          message.approved ? { approved: true } : { approved: false, reason },
        );
      } catch (error) {
        answer = { kind: 'approval-answer', approvalId, error: toErrorData(error) };
      }
      if (!this.#closed) this.#port.postMessage(answer);
    } else if (message.kind === 'output-verdict') {
      const settle = this.#checks.get(message.checkId);
      this.#checks.delete(message.checkId);
      settle?.(message.issues === undefined ? {} : { issues: message.issues });
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
