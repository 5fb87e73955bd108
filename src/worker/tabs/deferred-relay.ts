import type { AgentEvent } from '../../protocol/events';
import { type Cancel, later } from '../../timing/later';
import type { RunRelay } from './run-relay';

/**
 * The longest a run's relay waits for the answer to begin before it opens anyway: a watch in
 * another tab hears of a run this much later at most, while a model that answers sooner
 * (most do not: their first token takes longer) has its first request in flight alone.
 */
export const RELAY_OPEN_AFTER_MS = 100;

/**
 * A run's relay, opened once the answer begins (the first event after `run-start` and
 * `step-start`, after it was handed to the page's port) or {@link RELAY_OPEN_AFTER_MS} after `run-start`,
 * whichever comes first. Its channel and locks are then not asked for while the first model
 * request is in flight, which on a busy machine delays the response. The events before it
 * opened are published then, in order: a watch hears the run from its start, as a watch that
 * joins before `run-start` always did.
 */
export class DeferredRelay {
  readonly #open: () => Promise<RunRelay | undefined>;
  #relay: RunRelay | undefined;
  /** The events published before the relay opened; undefined once it has. */
  #waiting: AgentEvent[] | undefined = [];
  #opening: Promise<void> | undefined;
  #cancelOpen: Cancel | undefined;
  #closed = false;

  constructor(open: () => Promise<RunRelay | undefined>) {
    this.#open = open;
  }

  /**
   * Relays `event`. Returns a promise only when the event opens the relay (settled once the
   * relay has it); once open, every event is passed on at once, with nothing to await.
   */
  publish(event: AgentEvent): Promise<void> | undefined {
    if (this.#closed) return undefined;
    if (!this.#waiting) {
      this.#relay?.publish(event);
      return undefined;
    }
    this.#waiting.push(event);
    if (event.type === 'step-start') return undefined;
    if (event.type !== 'run-start') return this.#start();
    // A relay that cannot open fails the run at its next event, which awaits the same start.
    this.#cancelOpen ??= later(RELAY_OPEN_AFTER_MS, () => this.#start().catch(() => undefined));
    return undefined;
  }

  /** Closes the relay: what it was given is sent first; one not opened yet never opens. */
  close(): void {
    this.#closed = true;
    this.#cancelOpen?.();
    this.#relay?.close();
  }

  #start(): Promise<void> {
    this.#cancelOpen?.();
    this.#opening ??= this.#open().then((relay) => {
      if (this.#closed) {
        relay?.close();
        return;
      }
      this.#relay = relay;
      for (const event of this.#waiting ?? []) relay?.publish(event);
      this.#waiting = undefined;
    });
    return this.#opening;
  }
}
