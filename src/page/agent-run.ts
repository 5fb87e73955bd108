import { AirlockError } from '../errors/airlock-error';
import type { AgentEvent, RunFinishReason, RunResult } from '../protocol/events';
import { whenLoaded } from '../runtime/lazy-methods';
import { loadChunk } from '../runtime/load-chunk';
import type { ToolSchema } from '../tools/standard-schema';
import type { RunStream } from './run-stream';

/**
 * The result of a run asked for structured output: `output` is the answer validated by the
 * run's schema (its output type), present exactly when the run finished with `stop`.
 */
export type StructuredRunResult<Output> = Omit<RunResult, 'reason' | 'output'> &
  (
    | { readonly reason: 'stop'; readonly output: Output }
    | { readonly reason: Exclude<RunFinishReason, 'stop'>; readonly output?: undefined }
  );

let loading: Promise<typeof import('./run-stream')> | undefined;

/** Starts loading the code runs need (once); `createAgent` calls it so the first run does not wait for it. */
export function loadRunStream(): Promise<typeof import('./run-stream')> {
  loading ??= loadChunk('run-stream', () => import('./run-stream'));
  return loading;
}

/**
 * One run, seen from the page: an async iterable of its events (one reader), the
 * result, and abort.
 */
export class AgentRun<Result extends RunResult = RunResult> implements AsyncIterable<AgentEvent> {
  // The work is done by a `RunStream`, loaded with the agent's start: the page entry keeps
  // only this. Nothing is lost meanwhile: the port holds the worker's messages until read.
  /** Identifies the run in its events and result. */
  readonly runId: string;
  readonly #stream: Promise<RunStream<Result>>;
  readonly #result: Promise<Result>;
  #loaded: RunStream<Result> | undefined;
  #iterated = false;

  /** @internal Created by `Agent.run`. */
  constructor(runId: string, port: MessagePort, onEnd: () => void, output?: ToolSchema) {
    this.runId = runId;
    this.#stream = loadRunStream().then(
      ({ RunStream }) => {
        this.#loaded = new RunStream<Result>(runId, port, onEnd, output);
        return this.#loaded;
      },
      (error: unknown) => {
        port.close();
        onEnd();
        // Already `worker-load-failed`, naming the chunk (`loadChunk`).
        throw error;
      },
    );
    this.#result = this.#stream.then((stream) => stream.result);
    // A rejection the app never awaits must not surface as an unhandled rejection.
    this.#result.catch(() => {});
  }

  /**
   * Resolves with the run's result when it ends, or rejects with an `AirlockError`. If
   * nothing iterates the run by the next task, reading `result` consumes the events.
   */
  get result(): Promise<Result> {
    // Checked where the stream's code is: keeps the timer out of the page's first chunk.
    void this.#with((stream) => stream.drainUnless(() => this.#iterated));
    return this.#result;
  }

  /**
   * Lets the call of an `approval-request` run: pass the event's `approvalId`. Resolves
   * once the agent worker took the decision; rejects with `approval-unknown` for an id
   * this run never asked for and `approval-already-decided` for one already answered
   * (each request is answered once). Nothing needs to await it.
   */
  approve(approvalId: string): Promise<void> {
    return this.#with((stream) => stream.approve(approvalId));
  }

  /**
   * Refuses the call of an `approval-request` (by its `approvalId`); the model is told,
   * with `reason`, and the run goes on. Settles as `approve` does.
   */
  reject(approvalId: string, reason?: string): Promise<void> {
    return this.#with((stream) => stream.reject(approvalId, reason));
  }

  /** Asks the worker to stop the run; it ends with reason `aborted`. Idempotent. */
  abort(): void {
    void this.#with((stream) => stream.abort());
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
      // Once loaded, an event is handed over with no promise of this facade's in between.
      next: () => this.#loaded?.next() ?? this.#stream.then((stream) => stream.next()),
      // Breaking out of `for await` lands here: the reader is gone, so the run is cancelled.
      return: () =>
        this.#with((stream) => stream.leave()).then(() => ({ done: true, value: undefined })),
    };
  }

  /** @internal Ends a run whose signal was aborted before it started, without asking the worker. */
  abortBeforeStart(model: string, conversationId: string): void {
    void this.#with((stream) => stream.abortBeforeStart(model, conversationId));
  }

  /** @internal Ends the run from the page side (worker crash, dispose). */
  fail(error: AirlockError): void {
    void this.#with((stream) => stream.fail(error));
  }

  /** Runs `action` once the stream is loaded (in call order); an app that does not await it sees no unhandled rejection. */
  #with<T>(action: (stream: RunStream<Result>) => T | Promise<T>): Promise<T> {
    return whenLoaded(this.#stream, action);
  }
}
