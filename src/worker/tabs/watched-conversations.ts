import { MAX_ID_CHARS } from '../../errors/field-checks';
import {
  conversationOfWatchLock,
  relayListenerLockName,
  type WatchesMessage,
  watchesChannelName,
} from '../../protocol/tab-relay';
import { randomId } from '../../runtime/random-id';
import type { TabChannel, TabChannels } from '../../tabs/tab-channels';

/**
 * The most conversations one worker notes as watched. Past it (only a script announcing
 * watches by the thousand gets there) the note is given up: every run looks for a watch, as
 * it would without one.
 */
const MAX_NOTED = 10_000;

/**
 * A message on a database's watches channel, or undefined: any script of the origin can post
 * there, so nothing is taken on trust.
 */
export function parseWatchesMessage(data: unknown): WatchesMessage | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const fields = data as Record<string, unknown>;
  const { kind, requestId, conversationId, listener } = fields;
  if (!isId(requestId)) return undefined;
  if (kind === 'watching' && isId(conversationId)) return { kind, requestId, conversationId };
  if (kind === 'heard' && isId(listener)) return { kind, requestId, listener };
  return undefined;
}

/** The agent worker whose listener lock (`relayListenerLockName`) in `database` is named `lockName`, if it is one. */
export function listenerOfLock(database: string, lockName: string): string | undefined {
  const prefix = relayListenerLockName(database, '');
  return lockName.startsWith(prefix) ? lockName.slice(prefix.length) : undefined;
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS;
}

/**
 * Which conversations of a database a watch may be listening to, as one agent worker knows
 * it, so that a run no watch can hear asks the lock manager nothing and opens no channel
 * (most runs: each ask cost the running worker about 1 % of a run's CPU).
 *
 * The worker holds a Web Lock of its own (`relayListenerLockName`) while it lives, and listens
 * on the database's watches channel. A watch, once it holds its conversation's watch lock,
 * lists those workers' locks, announces itself on the channel, and waits until each worker
 * listed has heard it before it says `listening`. A worker that took its lock after that list
 * was made lists the watch locks held once its own is granted, and finds the watch's there. So
 * a run that starts after a watch is listening finds its conversation noted, and looks for the
 * watch as before. A conversation leaves the note when a run looks and finds no watch (unless
 * a watch announced itself meanwhile).
 */
export class WatchedConversations {
  readonly #database: string;
  readonly #channel: TabChannel;
  readonly #listener = randomId('listener');
  readonly #noted = new Set<string>();
  /** Set once the watch locks held were listed: until then, any conversation may be watched. */
  #known = false;
  /**
   * Set when the note outgrew `MAX_NOTED`, the worker's lock could not be had, or the note
   * was closed: it is kept no more.
   */
  #givenUp = false;
  /** Counts announcements, so a run's finding that no watch is there undoes none heard since it looked. */
  #heard = 0;
  /** The runs that opened no relay channel, woken when a watch of their conversation announces itself. */
  readonly #unwatched = new Map<string, () => void>();
  #release: () => void = () => {};
  #settle: () => void = () => {};
  /**
   * Settles once the watch locks held when the worker's lock came were noted (or the note was
   * given up): a run's relay opens after, so that no run takes a conversation for unwatched
   * before a watch there could be known.
   */
  readonly settled = new Promise<void>((resolve) => {
    this.#settle = resolve;
  });

  constructor(database: string, channels: TabChannels) {
    this.#database = database;
    // Listening before the lock is held: a watch that lists the lock is heard.
    this.#channel = channels.open(watchesChannelName(database));
    this.#channel.onmessage = ({ data }) => this.#receive(data);
    navigator.locks
      .request(relayListenerLockName(database, this.#listener), () => this.#hold())
      // Unheard by watches, or unable to list their locks: the note is never trusted, and
      // every run looks for a watch.
      .catch(() => this.#giveUp());
  }

  /** Holds the worker's lock until `close`, once the watches holding theirs are noted. */
  async #hold(): Promise<void> {
    if (this.#givenUp) return;
    const { held = [], pending = [] } = await navigator.locks.query();
    for (const { name = '' } of [...held, ...pending]) {
      const conversationId = conversationOfWatchLock(this.#database, name);
      if (conversationId !== undefined) this.#note(conversationId);
    }
    if (this.#givenUp) return;
    this.#known = true;
    this.#settle();
    await new Promise<void>((release) => {
      this.#release = release;
    });
  }

  /**
   * Whether a run of `conversationId` should look for a watch: no when no watch of it was
   * there when this worker started, nor announced itself since (or was found gone since).
   */
  mayBeWatched(conversationId: string): boolean {
    return !this.#known || this.#noted.has(conversationId);
  }

  /** The count of announcements heard: read as a run starts to look for a watch. */
  get heard(): number {
    return this.#heard;
  }

  /** A run looked for a watch of `conversationId` when `heard` was `heardBefore`, and found none. */
  noWatch(conversationId: string, heardBefore: number): void {
    if (this.#heard === heardBefore) this.#noted.delete(conversationId);
  }

  /**
   * Calls `wake` when a watch of `conversationId` announces itself, until the returned
   * function is called: a run that found no watch opens its relay then.
   */
  whileUnwatched(conversationId: string, wake: () => void): () => void {
    this.#unwatched.set(conversationId, wake);
    return () => {
      if (this.#unwatched.get(conversationId) === wake) this.#unwatched.delete(conversationId);
    };
  }

  /** Stops listening and lets go of the worker's lock. */
  close(): void {
    this.#giveUp();
    this.#channel.onmessage = null;
    this.#channel.close();
    this.#release();
  }

  #note(conversationId: string): void {
    if (this.#givenUp) return;
    this.#noted.add(conversationId);
    if (this.#noted.size > MAX_NOTED) this.#giveUp();
  }

  #giveUp(): void {
    this.#givenUp = true;
    this.#known = false;
    this.#noted.clear();
    this.#settle();
  }

  #receive(data: unknown): void {
    const message = parseWatchesMessage(data);
    if (message?.kind !== 'watching') return;
    this.#heard += 1;
    this.#note(message.conversationId);
    // Woken before the answer: the watch's `sync`, which follows it, finds the run's channel open.
    this.#unwatched.get(message.conversationId)?.();
    this.#channel.postMessage({
      kind: 'heard',
      requestId: message.requestId,
      listener: this.#listener,
    } satisfies WatchesMessage);
  }
}
