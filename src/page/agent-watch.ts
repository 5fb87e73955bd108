import { AirlockError } from '../errors/airlock-error';
import type { AgentEvent } from '../protocol/events';
import { whenLoaded } from '../runtime/lazy-methods';
import { loadChunk } from '../runtime/load-chunk';
import type { WatchStream } from './watch-stream';

/**
 * The runs of one conversation, live, whichever tab of the origin runs them: an async
 * iterable of their events (one reader), in order, each once. It waits for the next run
 * when none is going, and goes on from run to run until `close()` (or breaking out of the
 * `for await`). Stops and decisions are relayed to the tab that runs the run, which
 * applies them as its own page would.
 */
export class AgentWatch implements AsyncIterable<AgentEvent> {
  // The work is done by a `WatchStream`, loaded on the first watch: most apps never watch.
  // Nothing is lost meanwhile: the port holds the worker's messages until it is read.
  /** The conversation watched. */
  readonly conversationId: string;
  /**
   * Resolves once the watch hears the conversation's relay: a run that starts from then on
   * is seen from its `run-start`; or once the watch ends. Never rejects.
   */
  readonly listening: Promise<void>;
  readonly #stream: Promise<WatchStream>;
  #loaded: WatchStream | undefined;
  #iterated = false;

  /** @internal Created by `Agent.watch`. */
  constructor(conversationId: string, port: MessagePort, onEnd: () => void) {
    this.conversationId = conversationId;
    this.#stream = loadChunk('watch-stream', () => import('./watch-stream')).then(
      ({ WatchStream }) => {
        this.#loaded = new WatchStream(conversationId, port, onEnd);
        return this.#loaded;
      },
    );
    this.listening = this.#stream.then(
      (stream) => stream.listening,
      () => {},
    );
  }

  /** The id of the watched run going on now, if one is. */
  get liveRunId(): string | undefined {
    return this.#loaded?.liveRunId;
  }

  /**
   * Stops a watched run (by the `runId` of its `run-start`): it ends with reason `aborted`,
   * as `run.abort()` ends it. Resolves once the tab running it took the stop; rejects with
   * `not-found` when no tab runs it.
   */
  stop(runId: string): Promise<void> {
    return this.#with((stream) => stream.stop(runId));
  }

  /**
   * Lets the call of a watched run's `approval-request` run (by its `approvalId`). Settles as
   * `run.approve` does: rejects with `approval-unknown` for an id no watched run asked for,
   * `approval-already-decided` for one already answered (here, by its own page or elsewhere).
   */
  approve(approvalId: string): Promise<void> {
    return this.#with((stream) => stream.approve(approvalId));
  }

  /** Refuses the call of a watched run's `approval-request`; the model is told, with `reason`. */
  reject(approvalId: string, reason?: string): Promise<void> {
    return this.#with((stream) => stream.reject(approvalId, reason));
  }

  /** Ends the watch: the iteration ends; the runs go on. Idempotent. */
  close(): void {
    void this.#with((stream) => stream.close());
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    if (this.#iterated) {
      throw new AirlockError(
        'invalid-usage',
        'A watch can be iterated once; watch the conversation again for another reader.',
      );
    }
    this.#iterated = true;
    const events = this.#stream.then((stream) => stream[Symbol.asyncIterator]());
    return {
      next: () => events.then((iterator) => iterator.next()),
      // Breaking out of `for await` ends the watch, not the run it watches.
      return: () =>
        events.then((iterator) => iterator.return?.() ?? { done: true, value: undefined }),
    };
  }

  /** @internal Ends the watch from the page side (dispose, worker crash). */
  end(): void {
    void this.#with((stream) => stream.end());
  }

  /** Runs `action` once the stream is loaded (in call order); an app that does not await it sees no unhandled rejection. */
  #with<T>(action: (stream: WatchStream) => T | Promise<T>): Promise<T> {
    return whenLoaded(this.#stream, action);
  }
}
