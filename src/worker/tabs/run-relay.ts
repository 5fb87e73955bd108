import { AirlockError, toErrorData } from '../../errors/airlock-error';
import type { AgentEvent } from '../../protocol/events';
import {
  type RelayAction,
  type RelayMessage,
  relayChannelName,
  relayPresenceLockName,
  relayWatchLockName,
} from '../../protocol/tab-relay';
import { loadChunk } from '../../runtime/load-chunk';
import { randomId } from '../../runtime/random-id';
import {
  ownTabChannels,
  type TabChannel,
  type TabChannels,
  tabChannelsOver,
} from '../../tabs/tab-channels';
import { WatchedConversations } from './watched-conversations';

/** The relay's parser, loaded when a first message arrives: most runs are never watched. */
type RelaySchema = typeof import('./relay-schema');

/** What the running tab does with a stop or decision another tab relays. */
export interface RunRelayHandlers {
  /** Stops the run, as the page's `abort()` does. */
  readonly onStop: () => void;
  /** Applies a decision; throws an `AirlockError` to refuse it (unknown or already decided). */
  readonly onApproval: (approvalId: string, approved: boolean, reason: string) => void;
}

/** The conversation a run is of, what its worker knows of the conversation's watches, and where it opens its channel. */
export interface RelayWatches {
  readonly conversationId: string;
  readonly watched: WatchedConversations;
  readonly channels: TabChannels;
}

/**
 * The running tab's end of a run's relay: every event of the run, numbered from 0
 * (`run-start`), on the conversation's channel of the tab hub; answers to `sync` (where the run
 * is, for a watcher that joins late); and stops and decisions from watchers, applied through
 * the same gate as the page's own (so an approval id the run never issued is refused).
 * Opened by the worker that holds the conversation's lock, at `run-start`, and closed after
 * the run's last event.
 *
 * Most runs are never watched, so events are posted only when a watch is there: one that
 * holds the conversation's watch lock when the run starts (it gets every event, from
 * `run-start`), or one that asks with `sync` later (it joins). Until then events are
 * numbered and dropped; the run's start and open approvals are kept for a `sync`. The run's
 * presence lock, which tells watchers when it is over, is taken only then too: before the
 * first post to a watch. When the worker knows no watch of the conversation can be there
 * (`WatchedConversations`), the run does not even ask: it opens no channel, and asks for no
 * lock, unless a watch announces itself while the run goes on.
 */
export class RunRelay {
  #channel: TabChannel | undefined;
  readonly #channels: TabChannels;
  readonly #channelName: string;
  readonly #runId: string;
  readonly #handlers: RunRelayHandlers;
  /** Names this relay in its messages, so a watcher can tell them from another sender's. */
  readonly #source = randomId('relay');
  #runStart: AgentEvent | undefined;
  /** Approval requests the run made and no watcher or page has seen settled yet. */
  readonly #openApprovals = new Map<string, AgentEvent>();
  #batch: AgentEvent[] = [];
  /** The number of the next event published. */
  #next = 0;
  /** Whether a watch is there; unknown (nothing is posted yet) until the lock query answers. */
  #watched: boolean | undefined;
  #closed = false;
  readonly #presenceLockName: string;
  /** Set once the run's presence lock is asked for: when a watch is there, or asks. */
  #presenceAsked = false;
  /** Set once the run's presence lock is held: nothing is posted before, so no watcher sees the run without it. */
  #held = false;
  /** A watch asked with `sync` before the presence lock was held: it is answered once it is. */
  #joinAsked = false;
  #closing = false;
  #releasePresence: () => void = () => {};
  /** Messages are handled one after another, in order, once the parser is loaded. */
  #received: Promise<RelaySchema> | undefined;
  /** Ends the wait for a watch's announcement, when the run opened no channel. */
  #stopWaking: () => void = () => {};

  constructor(
    channelName: string,
    runId: string,
    handlers: RunRelayHandlers,
    watches: RelayWatches,
  ) {
    this.#channelName = channelName;
    this.#channels = watches.channels;
    this.#presenceLockName = relayPresenceLockName(channelName, runId);
    this.#runId = runId;
    this.#handlers = handlers;
    if (!watches.watched.mayBeWatched(watches.conversationId)) {
      this.#watched = false;
      this.#stopWaking = watches.watched.whileUnwatched(watches.conversationId, () => this.#wake());
      return;
    }
    this.#open();
    const heardBefore = watches.watched.heard;
    // A watch listening now holds its lock (shared) already: it had it before it said it was
    // listening, so the lock cannot be had alone. (Asking costs one answer, where a query of
    // every lock of the origin cost one per run going on.)
    navigator.locks
      .request(relayWatchLockName(channelName), { ifAvailable: true }, (lock) => lock === null)
      .then(
        (watched) => {
          this.#watched ||= watched;
          if (!this.#watched) watches.watched.noWatch(watches.conversationId, heardBefore);
          // A watch is there and may soon send a stop or an approval: its parser loads now,
          // not on the first such message, which would then wait for the import.
          if (this.#watched) {
            this.#received ??= loadChunk('relay-schema', () => import('./relay-schema'));
            this.#holdPresence();
          }
          this.#settle();
        },
        // Unknown, as when the run could not be relayed before: relay every event.
        () => {
          this.#watched = true;
          this.#holdPresence();
          this.#settle();
        },
      );
  }

  /** Opens the run's channel, where watches send `sync`, stops and decisions. */
  #open(): void {
    this.#channel = this.#channels.open(this.#channelName);
    this.#channel.onmessage = (message) => {
      this.#received = (
        this.#received ?? loadChunk('relay-schema', () => import('./relay-schema'))
      ).then((schema) => {
        this.#receive(schema, message.data);
        return schema;
      });
    };
  }

  /**
   * A watch of the conversation announced itself while the run had no channel: the channel
   * opens before the watch sends `sync`, and every event from now on is posted.
   */
  #wake(): void {
    this.#stopWaking();
    if (this.#closed || this.#closing) return;
    this.#open();
    this.#watched = true;
    this.#received ??= loadChunk('relay-schema', () => import('./relay-schema'));
    this.#holdPresence();
  }

  /**
   * Takes the run's presence lock, once: before anything is posted, so no watcher sees the
   * run without it. Only a watched run takes it; an unwatched one (most) spares the lock's
   * round trip to the browser, until a watch asks with `sync`.
   */
  #holdPresence(): void {
    if (this.#presenceAsked) return;
    this.#presenceAsked = true;
    navigator.locks
      .request(
        this.#presenceLockName,
        () =>
          new Promise<void>((release) => {
            this.#held = true;
            this.#releasePresence = release;
            this.#settle();
          }),
      )
      // Only a worker being torn down fails to take a lock no one else names: the run is not relayed.
      .catch(() => this.#abandon());
  }

  /** Relays one event; the events of one task go out as one message. */
  publish(event: AgentEvent): void {
    if (this.#closed || this.#closing) return;
    if (event.type === 'run-start') this.#runStart = event;
    if (event.type === 'approval-request') this.#openApprovals.set(event.approvalId, event);
    if (event.type === 'tool-result') {
      for (const [approvalId, request] of this.#openApprovals)
        if (request.type === 'approval-request' && request.callId === event.callId)
          this.#openApprovals.delete(approvalId);
    }
    if (event.type === 'step-finish') this.#openApprovals.clear();
    // Known to have no watch: the event is only counted (a watch that joins later starts
    // from `run-start` and what is still open, then from the next event).
    if (this.#watched === false && this.#batch.length === 0) {
      this.#next += 1;
      return;
    }
    this.#batch.push(event);
    if (this.#batch.length === 1) queueMicrotask(() => this.#flush());
  }

  /** Sends what is batched, stops listening and releases the run's presence lock. */
  close(): void {
    this.#closing = true;
    this.#settle();
  }

  /**
   * Whether what is batched can go: it is known whether a watch is there, and when one is,
   * the presence lock is held.
   */
  get #ready(): boolean {
    return this.#watched === false || (this.#watched === true && this.#held);
  }

  /** Once ready: sends or drops what is batched, and answers a watch that asked to join. */
  #settle(): void {
    if (!this.#ready) return;
    if (this.#joinAsked) {
      this.#joinAsked = false;
      this.#join();
    }
    if (this.#closing) this.#finish();
    else this.#flush();
  }

  /** Gives up relaying: the channel closes and nothing batched is sent. */
  #abandon(): void {
    this.#batch = [];
    this.#shut();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#flush();
    this.#shut();
    this.#releasePresence();
  }

  #shut(): void {
    this.#closed = true;
    this.#stopWaking();
    if (this.#channel) this.#channel.onmessage = null;
    this.#channel?.close();
  }

  #flush(): void {
    if (this.#closed || !this.#ready || this.#batch.length === 0) return;
    const events = this.#batch;
    this.#batch = [];
    if (this.#watched) {
      this.#post({
        kind: 'events',
        source: this.#source,
        runId: this.#runId,
        seq: this.#next,
        events,
      });
    }
    this.#next += events.length;
  }

  #receive(schema: RelaySchema, data: unknown): void {
    if (this.#closed) return;
    const parsed = schema.parseRelayMessage(data);
    // The running tab has nobody to warn: a message it cannot read is not for it.
    if (!parsed.ok) return;
    const message = parsed.message;
    if (message.kind === 'sync') {
      this.#watched = true;
      this.#holdPresence();
      if (!this.#runStart) return;
      if (this.#held) this.#join();
      else this.#joinAsked = true;
    } else if (message.kind === 'control' && message.runId === this.#runId) {
      this.#apply(message.requestId, message);
    }
  }

  /** Tells a watch that asked where the run is: its start, what is still open, and the number of the next event. */
  #join(): void {
    if (this.#closed || !this.#runStart) return;
    // What is batched goes first, so `next` is the number of the first event the watcher has not seen.
    this.#flush();
    this.#post({
      kind: 'joined',
      source: this.#source,
      runId: this.#runId,
      next: this.#next,
      events: [this.#runStart, ...this.#openApprovals.values()],
    });
  }

  #apply(requestId: string, action: RelayAction): void {
    let error: ReturnType<typeof toErrorData> | undefined;
    try {
      if (action.action === 'stop') this.#handlers.onStop();
      else
        this.#handlers.onApproval(
          action.approvalId,
          action.approved,
          action.reason ?? 'No reason given.',
        );
    } catch (refusal) {
      error = toErrorData(refusal);
    }
    this.#post({
      kind: 'control-answer',
      source: this.#source,
      requestId,
      runId: this.#runId,
      ...(error === undefined ? {} : { error }),
    });
  }

  #post(message: RelayMessage): void {
    this.#channel?.postMessage(message);
  }
}

/**
 * The relays of the runs of one database's conversations in this worker, which share what the
 * worker knows of the database's watches, and the channels they and the worker's watches open.
 */
export class RunRelays {
  /**
   * On the app's tab hub, when the page gave a port to it (every tab of the origin), or on a
   * hub of this worker's own (this agent's watches only).
   */
  readonly channels: TabChannels;
  readonly #database: string;
  readonly #watched: WatchedConversations;

  constructor(database: string, tabHub: MessagePort | undefined) {
    this.#database = database;
    if (tabHub !== undefined && !(tabHub instanceof MessagePort))
      throw new AirlockError('invalid-options', 'The tab hub must arrive as a MessagePort.', {
        details: { field: 'tabs' },
      });
    this.channels = tabHub ? tabChannelsOver(tabHub) : ownTabChannels();
    this.#watched = new WatchedConversations(database, this.channels);
  }

  /** Opens the relay of run `runId` of `conversationId`, once the watches already there are known. */
  async open(conversationId: string, runId: string, handlers: RunRelayHandlers): Promise<RunRelay> {
    await this.#watched.settled;
    return new RunRelay(relayChannelName(this.#database, conversationId), runId, handlers, {
      conversationId,
      watched: this.#watched,
      channels: this.channels,
    });
  }

  /** Stops hearing the database's watches, and lets the hub forget this worker. */
  close(): void {
    this.#watched.close();
    this.channels.close();
  }
}
