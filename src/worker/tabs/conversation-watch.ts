import { AirlockError } from '../../errors/airlock-error';
import type { ErrorData } from '../../protocol/errors';
import type { AgentEvent } from '../../protocol/events';
import {
  type PageToWatch,
  type RelayMessage,
  relayPresenceLockName,
  relayWatchLockName,
  type WatchesMessage,
  type WatchToPage,
  watchesChannelName,
} from '../../protocol/tab-relay';
import { randomId } from '../../runtime/random-id';
import { rowProblems } from '../../store/row-schemas';
import type { RunSeal } from '../../store/run-seal';
import type { ConversationStore, RunRecord } from '../../store/store';
import type { TabChannel, TabChannels } from '../../tabs/tab-channels';
import { type Cancel, later } from '../../timing/later';
import { waitFor } from '../../timing/wait';
import { markRunInterrupted } from '../run/interrupted-runs';
import { endsRun, parsePageToWatch, parseRelayMessage } from './relay-schema';
import { listenerOfLock, parseWatchesMessage } from './watched-conversations';

/**
 * How long a watch waits for the agent workers of its database to hear it is listening: one
 * that has not heard by then (a frozen tab's) may let a run that starts after `listening`
 * go unrelayed until the watch is heard, and the watch joins it then.
 */
const ANNOUNCE_TIMEOUT_MS = 1_000;

/** How long a stop or decision waits for the running tab's answer. */
const CONTROL_TIMEOUT_MS = 5_000;

/**
 * How long a watched run whose relay let go of its presence lock, and whose record says it
 * ended, may take to deliver its last event (posted before the lock is released, it may
 * still arrive after).
 */
const LAST_EVENT_GRACE_MS = 2_000;

/** The most `relay-message-dropped` warnings one watch reports; the rest are dropped silently. */
const MAX_WARNINGS = 20;

/** Run ids a watch remembers as ended, to ignore their late messages. */
const MAX_ENDED_RUNS = 64;

/**
 * Where a watch looks: the database and conversation, the tab hub's channels and its relay
 * channel's name there, its lock (for repairs) and the store.
 */
export interface WatchTarget {
  readonly database: string;
  readonly conversationId: string;
  readonly channels: TabChannels;
  readonly channelName: string;
  readonly lockName: string;
  readonly store: ConversationStore;
  /** Seals the rows of runs the watch marks interrupted. */
  readonly runSeal: RunSeal;
}

/** The run a watch follows: who relays it and the number of the next event it expects. */
interface FollowedRun {
  readonly runId: string;
  readonly source: string;
  expected: number;
  ended: boolean;
  /** Ends the wait for the run's presence lock. */
  readonly lockWait: AbortController;
}

/** A stop or decision relayed to the running tab, waiting for its answer. */
interface PendingControl {
  readonly pageRequestId: string;
  readonly runId: string;
  readonly source: string;
  readonly approval: boolean;
  readonly cancelTimeout: Cancel;
}

/**
 * The agent worker's side of `agent.watch(conversationId)`: reads the conversation's relay
 * channel, follows one run at a time (the one holding the conversation's lock), and passes
 * its events to the page in order, each once. Every message is parsed; one that is
 * malformed, from another sender than the run's relay, or for a run that is not the live
 * one, is dropped with a `relay-message-dropped` warning. A run is vouched for by its relay's
 * presence lock: when it comes free before the run's last event, the run's record decides (a forged
 * run has none; a run its tab left `running` is marked interrupted and the watch gets a
 * `run-error` with `run-interrupted`).
 *
 * One piece at ~500 lines on purpose: it is one state machine (the followed run, its
 * expected sequence number, the pending stops and decisions, the presence check) whose
 * handlers all read and change that state; split into files, each part would need the
 * whole of it, and the order of its transitions would no longer read in one place.
 */
export class ConversationWatch {
  readonly #target: WatchTarget;
  readonly #port: MessagePort;
  readonly #channel: TabChannel;
  #current: FollowedRun | undefined;
  readonly #ended = new Set<string>();
  readonly #syncAsked = new Set<string>();
  readonly #pending = new Map<string, PendingControl>();
  #batch: AgentEvent[] = [];
  #warnings = 0;
  #closed = false;
  /** Ends the watch lock's request, or lets go of the lock once held. */
  readonly #listening = new AbortController();
  #releaseListening: () => void = () => {};
  #markClosed: () => void = () => {};
  /** Settles when the watch is closed (by the page or the agent's end). */
  readonly closed: Promise<void>;

  constructor(target: WatchTarget, port: MessagePort) {
    this.#target = target;
    this.#port = port;
    this.closed = new Promise((resolve) => {
      this.#markClosed = resolve;
    });
    this.#channel = target.channels.open(target.channelName);
    this.#channel.onmessage = (message) => this.#receive(message.data);
    port.onmessage = (message: MessageEvent<unknown>) => {
      const parsed = parsePageToWatch(message.data);
      if (parsed) this.#fromPage(parsed);
    };
    // Held while the watch listens, so a run that starts from now on relays its events from
    // its start (a run no watch holds this for relays nothing until asked).
    navigator.locks
      .request(
        relayWatchLockName(target.channelName),
        { mode: 'shared', signal: this.#listening.signal },
        () => {
          // Granted as the watch closed (too late for the abort): let go at once.
          if (this.#closed) return;
          return new Promise<void>((release) => {
            this.#releaseListening = release;
            this.#announce().then(
              () => this.#startListening(),
              (error: unknown) => {
                this.#warn(`Runs that start may not be relayed to this watch: ${String(error)}.`);
                this.#startListening();
              },
            );
          });
        },
      )
      .catch((error: unknown) => {
        // Aborted: the watch closed before the lock came.
        if (this.#closed) return;
        this.#warn(`Runs that start may not be relayed to this watch: ${String(error)}.`);
        this.#startListening();
      });
  }

  /**
   * Tells the agent workers that run the database's conversations that this watch listens
   * (each notes it, and asks for no watch lock in a run of a conversation it has not noted),
   * and resolves once every worker holding a listener lock now has heard, or after
   * `ANNOUNCE_TIMEOUT_MS`. A worker that takes its lock later finds this watch's lock held.
   */
  async #announce(): Promise<void> {
    const { database, conversationId } = this.#target;
    const { held = [] } = await navigator.locks.query();
    const waiting = new Set(held.flatMap(({ name = '' }) => listenerOfLock(database, name) ?? []));
    if (waiting.size === 0 || this.#closed) return;
    const channel = this.#target.channels.open(watchesChannelName(database));
    const requestId = randomId('watching');
    try {
      const heardByAll = new Promise<void>((resolve) => {
        channel.onmessage = ({ data }) => {
          const message = parseWatchesMessage(data);
          if (message?.kind !== 'heard' || message.requestId !== requestId) return;
          waiting.delete(message.listener);
          if (waiting.size === 0) resolve();
        };
        channel.postMessage({
          kind: 'watching',
          requestId,
          conversationId,
        } satisfies WatchesMessage);
      });
      await waitFor(heardByAll, { timeoutMs: ANNOUNCE_TIMEOUT_MS });
    } finally {
      channel.onmessage = null;
      channel.close();
    }
  }

  /** A run already going answers `sync` with where it is; runs that start from now on are seen from their start. */
  #startListening(): void {
    if (this.#closed) return;
    this.#post({ kind: 'sync' });
    this.#port.postMessage({ kind: 'listening' } satisfies WatchToPage);
  }

  /** Stops listening, ends the wait for the run's relay and closes the port. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    this.#listening.abort();
    this.#releaseListening();
    this.#current?.lockWait.abort();
    for (const [requestId, pending] of this.#pending) {
      pending.cancelTimeout();
      this.#pending.delete(requestId);
    }
    this.#channel.onmessage = null;
    this.#channel.close();
    this.#port.onmessage = null;
    this.#port.close();
    this.#markClosed();
  }

  #receive(data: unknown): void {
    if (this.#closed) return;
    const parsed = parseRelayMessage(data);
    if (!parsed.ok) {
      this.#warn(`A relay message was malformed (${parsed.problem}).`);
      return;
    }
    const message = parsed.message;
    if (message.kind === 'events') this.#onEvents(message);
    else if (message.kind === 'joined') this.#onJoined(message);
    else if (message.kind === 'control-answer') this.#onAnswer(message);
    // `sync` and `control` are for the running tab.
  }

  #onEvents(message: Extract<RelayMessage, { kind: 'events' }>): void {
    const { runId, source, seq, events } = message;
    if (this.#ended.has(runId)) return;
    const mismatch = events.find((event) => 'runId' in event && event.runId !== runId);
    if (mismatch) {
      this.#warn(`Events relayed for run ${runId} name another run; they were dropped.`);
      return;
    }
    let current = this.#current;
    if (!current || current.ended) {
      if (seq === 0 && events[0]?.type === 'run-start') {
        current = this.#follow(runId, source, 0);
      } else {
        // A run that started before this watch heard it: ask where it is, once.
        if (!this.#syncAsked.has(runId)) {
          if (this.#syncAsked.size >= MAX_ENDED_RUNS) this.#syncAsked.clear();
          this.#syncAsked.add(runId);
          this.#post({ kind: 'sync' });
        }
        return;
      }
    }
    if (current.runId !== runId) {
      this.#warn(
        `Events relayed for run ${runId} while run ${current.runId} is live were dropped.`,
      );
      return;
    }
    if (current.source !== source) {
      this.#warn(`Events for run ${runId} from another sender than its relay were dropped.`);
      return;
    }
    this.#take(current, seq, events);
  }

  #onJoined(message: Extract<RelayMessage, { kind: 'joined' }>): void {
    const { runId, source, next, events } = message;
    if (this.#ended.has(runId)) return;
    const current = this.#current;
    // Already following: every live watch's `sync` is answered, and this one is not news.
    if (current && !current.ended) {
      if (current.runId !== runId)
        this.#warn(`A relay claimed run ${runId} while run ${current.runId} is live.`);
      return;
    }
    const [start, ...rest] = events;
    if (
      start?.type !== 'run-start' ||
      start.runId !== runId ||
      rest.some((event) => event.type !== 'approval-request')
    ) {
      this.#warn(`A relay's answer for run ${runId} was not a run's start and open approvals.`);
      return;
    }
    this.#follow(runId, source, next);
    for (const event of events) this.#deliver(event);
    this.#flush();
  }

  #onAnswer(message: Extract<RelayMessage, { kind: 'control-answer' }>): void {
    const pending = this.#pending.get(message.requestId);
    // Only the relay of the run it was sent to answers a request.
    if (!pending || pending.source !== message.source || pending.runId !== message.runId) return;
    this.#settle(message.requestId, message.error);
  }

  /** Follows a run from event number `expected` on, until its last event or its relay is gone. */
  #follow(runId: string, source: string, expected: number): FollowedRun {
    const followed: FollowedRun = {
      runId,
      source,
      expected,
      ended: false,
      lockWait: new AbortController(),
    };
    this.#current = followed;
    // Granted when the relaying worker let go of it: the run's last event is posted, or its
    // tab is gone. Released at once: the check that follows needs no lock.
    navigator.locks
      .request(
        relayPresenceLockName(this.#target.channelName, runId),
        { signal: followed.lockWait.signal },
        () => undefined,
      )
      .then(
        () => this.#relayGone(followed),
        (error: unknown) => {
          // Aborted: the run ended, or the watch closed, first.
          if (error instanceof DOMException && error.name === 'AbortError') return;
          this.#warn(`Run ${runId} could not be followed to its end: ${String(error)}.`);
        },
      );
    return followed;
  }

  /** Delivers events in order, each once: older ones are skipped, a gap is reported. */
  #take(run: FollowedRun, seq: number, events: readonly AgentEvent[]): void {
    events.forEach((event, index) => {
      const number = seq + index;
      if (run.ended || number < run.expected) return;
      if (number > run.expected) {
        this.#warn(
          `Events ${run.expected} to ${number - 1} of run ${run.runId} were not received.`,
        );
      }
      run.expected = number + 1;
      this.#deliver(event);
      if (endsRun(event)) this.#endRun(run);
    });
    this.#flush();
  }

  /**
   * The followed run's relay let go of its presence lock before the watch saw the run's last
   * event: the run ended (the event is on its way) or its tab is gone. Its record says which.
   */
  async #relayGone(run: FollowedRun): Promise<void> {
    if (run.ended || this.#closed) return;
    const row = await this.#readRun(run);
    if (row === 'failed' || run.ended || this.#closed) return;
    if (row === undefined) {
      this.#warn(`No tab runs run ${run.runId} and none stored it; its events were not a run's.`);
      this.#endRun(run);
      return;
    }
    const record = row;
    if (record.status === 'running') {
      await this.#repair(run);
      this.#interrupted(run, 'interrupted');
    } else if (record.status === 'awaiting-approval') {
      this.#interrupted(run, 'awaiting-approval');
    } else {
      // It ended: its last event was posted before the lock came free, and is on its way.
      later(LAST_EVENT_GRACE_MS, () => {
        if (run.ended || this.#closed) return;
        this.#warn(`Run ${run.runId} ended (${record.status}) without relaying its last event.`);
        this.#endRun(run);
      });
    }
  }

  /** The followed run's record: undefined when it is not a run of this conversation, `failed` when unreadable. */
  async #readRun(run: FollowedRun): Promise<RunRecord | undefined | 'failed'> {
    let row: unknown;
    try {
      row = await this.#target.store.getRun(run.runId);
    } catch (error) {
      this.#warn(`Run ${run.runId} could not be read: ${String(error)}.`);
      return 'failed';
    }
    if (
      row === undefined ||
      rowProblems('runs', row).length > 0 ||
      (row as { conversationId?: unknown }).conversationId !== this.#target.conversationId
    )
      return undefined;
    return row as RunRecord;
  }

  /**
   * Marks a run its tab left `running` as interrupted, under the conversation's lock if it is
   * free (a lock held means another tab is already at it, or runs the conversation again: the
   * repair at an agent's start then covers the record).
   */
  async #repair(run: FollowedRun): Promise<void> {
    try {
      await navigator.locks.request(this.#target.lockName, { ifAvailable: true }, async (lock) => {
        if (!lock) return;
        const row = await this.#readRun(run);
        if (row !== 'failed' && row?.status === 'running')
          await markRunInterrupted(this.#target.store, this.#target.runSeal, row);
      });
    } catch (error) {
      this.#warn(`Run ${run.runId} could not be marked interrupted: ${String(error)}.`);
    }
  }

  #interrupted(run: FollowedRun, status: 'interrupted' | 'awaiting-approval'): void {
    if (run.ended || this.#closed) return;
    const error = new AirlockError(
      'run-interrupted',
      `The tab running run ${run.runId} closed before it ended; the run is ${status} and can be resumed.`,
      { details: { runId: run.runId, status } },
    );
    this.#deliver({ type: 'run-error', runId: run.runId, error: error.toData() });
    this.#flush();
    this.#endRun(run);
  }

  #endRun(run: FollowedRun): void {
    if (run.ended) return;
    run.ended = true;
    run.lockWait.abort();
    if (this.#ended.size >= MAX_ENDED_RUNS) this.#ended.clear();
    this.#ended.add(run.runId);
    // The run read no decision still on its way: each request ends with the run.
    for (const [requestId, pending] of this.#pending) {
      if (pending.runId !== run.runId) continue;
      this.#settle(
        requestId,
        pending.approval
          ? new AirlockError(
              'approval-already-decided',
              `Run ${run.runId} ended before it read the decision; the request ended with the run.`,
            ).toData()
          : undefined,
      );
    }
  }

  #fromPage(message: PageToWatch): void {
    if (this.#closed) return;
    if (message.kind === 'close') {
      this.close();
      return;
    }
    const { requestId: pageRequestId, runId } = message;
    const current = this.#current;
    const approval = message.action === 'approval';
    if (!current || current.ended || current.runId !== runId) {
      const refusal = approval
        ? new AirlockError(
            'approval-unknown',
            `No live run ${runId} of this conversation asked for approval ${message.approvalId}.`,
            { details: { approvalId: message.approvalId } },
          )
        : new AirlockError('not-found', `No tab is running run ${runId} of this conversation.`, {
            details: { runId },
          });
      this.#answer(pageRequestId, refusal.toData());
      return;
    }
    const requestId = randomId('control');
    const cancelTimeout = later(CONTROL_TIMEOUT_MS, () =>
      this.#settle(
        requestId,
        new AirlockError(
          'not-found',
          `The tab running run ${runId} did not answer within ${CONTROL_TIMEOUT_MS} ms.`,
          { details: { runId } },
        ).toData(),
      ),
    );
    this.#pending.set(requestId, {
      pageRequestId,
      runId,
      source: current.source,
      approval,
      cancelTimeout,
    });
    const { kind: _kind, requestId: _pageRequestId, ...action } = message;
    this.#post({ kind: 'control', ...action, requestId });
  }

  #settle(requestId: string, error: ErrorData | undefined): void {
    const pending = this.#pending.get(requestId);
    if (!pending) return;
    this.#pending.delete(requestId);
    pending.cancelTimeout();
    this.#answer(pending.pageRequestId, error);
  }

  #answer(requestId: string, error: ErrorData | undefined): void {
    if (this.#closed) return;
    // Events before the answer: the page has seen what the decision was about.
    this.#flush();
    this.#port.postMessage({
      kind: 'answer',
      requestId,
      ...(error === undefined ? {} : { error }),
    } satisfies WatchToPage);
  }

  #warn(message: string): void {
    this.#warnings += 1;
    if (this.#warnings > MAX_WARNINGS) return;
    const suffix =
      this.#warnings === MAX_WARNINGS ? ' Further dropped messages are not reported.' : '';
    this.#deliver({ type: 'warning', code: 'relay-message-dropped', message: message + suffix });
    this.#flush();
  }

  #deliver(event: AgentEvent): void {
    if (this.#closed) return;
    this.#batch.push(event);
  }

  #flush(): void {
    if (this.#closed || this.#batch.length === 0) return;
    const events = this.#batch;
    this.#batch = [];
    this.#port.postMessage({ kind: 'events', events } satisfies WatchToPage);
  }

  #post(message: RelayMessage): void {
    this.#channel.postMessage(message);
  }
}
