/**
 * The messages of live runs across tabs. The agent worker running a conversation (the one
 * holding its Web Lock) relays the run's events on a `BroadcastChannel` of that database
 * and conversation; watchers in any tab of the origin read them and send stops and
 * approval decisions back. Types only: the agent worker parses every one of these on
 * arrival, because any same-origin script can post on the channel.
 */
import type { ErrorData } from './errors';
import type { AgentEvent } from './events';

/** The `BroadcastChannel` a conversation's runs are relayed on. */
export function relayChannelName(database: string, conversationId: string): string {
  return `${conversationsPrefix(database)}${conversationId}${RELAY_SUFFIX}`;
}

const conversationsPrefix = (database: string) => `airlock:${database}:conversation:`;
const RELAY_SUFFIX = ':relay';

/**
 * The Web Lock a relaying worker holds from before it first posts a run's events to a watch
 * until its last event is posted (or its tab is gone); a run no watch hears never takes it.
 * Watchers wait for it to learn that the run is over without ever holding the
 * conversation's lock, which the next run needs at once.
 */
export function relayPresenceLockName(channelName: string, runId: string): string {
  return `${channelName}:run:${runId}`;
}

/**
 * The Web Lock every watch of a conversation holds (shared) while it listens. A relay looks
 * for it when its run starts: with no watch there it posts none of the run's events (each
 * post costs the running worker) until a watch that comes later asks with `sync`.
 */
export function relayWatchLockName(channelName: string): string {
  return `${channelName}:watch`;
}

/**
 * The conversation whose watch lock (`relayWatchLockName`) in `database` is named `lockName`,
 * or undefined when it is not such a lock.
 */
export function conversationOfWatchLock(database: string, lockName: string): string | undefined {
  const prefix = conversationsPrefix(database);
  const suffix = relayWatchLockName(RELAY_SUFFIX);
  if (!lockName.startsWith(prefix) || !lockName.endsWith(suffix)) return undefined;
  return lockName.slice(prefix.length, -suffix.length);
}

/**
 * The `BroadcastChannel` on which a watch of any conversation of `database` announces itself
 * to the agent workers that run that database's conversations (`WatchesMessage`).
 */
export function watchesChannelName(database: string): string {
  return `airlock:${database}:watches`;
}

/**
 * The Web Lock an agent worker holds while it runs conversations of `database`, named for the
 * worker (`listener`): a watch waits, before it says `listening`, until each worker holding
 * one has heard its announcement.
 */
export function relayListenerLockName(database: string, listener: string): string {
  return `airlock:${database}:relay-listener:${listener}`;
}

/** What goes over a database's watches channel. */
export type WatchesMessage =
  /** A watch of `conversationId` is listening; each agent worker answers with `heard`. */
  | { readonly kind: 'watching'; readonly requestId: string; readonly conversationId: string }
  /** Agent worker `listener` has noted the watch that sent `requestId`. */
  | { readonly kind: 'heard'; readonly requestId: string; readonly listener: string };

/** One stop or approval decision, as a watcher asks the running tab to apply it. */
export type RelayAction =
  | { readonly action: 'stop' }
  | {
      readonly action: 'approval';
      readonly approvalId: string;
      readonly approved: boolean;
      readonly reason?: string;
    };

/** What goes over a conversation's relay channel. */
export type RelayMessage =
  /**
   * Events of a run, in order: `events[i]` is the run's event number `seq + i` (`run-start`
   * is 0). `source` names the relaying worker for this run alone.
   */
  | {
      readonly kind: 'events';
      readonly source: string;
      readonly runId: string;
      readonly seq: number;
      readonly events: readonly AgentEvent[];
    }
  /**
   * A watcher asks the running tab where its run is (sent when a watch starts or misses a
   * run's start); a run that no watch was there for relays its events from then on.
   */
  | { readonly kind: 'sync' }
  /**
   * The running tab's answer to `sync`: the run's `run-start` and its open `approval-request`s,
   * and the number its next event will carry.
   */
  | {
      readonly kind: 'joined';
      readonly source: string;
      readonly runId: string;
      readonly next: number;
      readonly events: readonly AgentEvent[];
    }
  /** A watcher asks the running tab to apply `action` to run `runId`. */
  | ({ readonly kind: 'control'; readonly requestId: string; readonly runId: string } & RelayAction)
  /** The running tab's answer: applied, or refused with `error` (e.g. `approval-unknown`). */
  | {
      readonly kind: 'control-answer';
      readonly source: string;
      readonly requestId: string;
      readonly runId: string;
      readonly error?: ErrorData;
    };

/** Page → agent worker, on a watch's port: a stop or decision to relay, or the end of the watch. */
export type PageToWatch =
  | ({ readonly kind: 'control'; readonly requestId: string; readonly runId: string } & RelayAction)
  | { readonly kind: 'close' };

/** Agent worker → page, on a watch's port: events as a run's port carries them, or a control's answer. */
export type WatchToPage =
  /** The watch hears the conversation's relay: runs that start from now on are seen from their start. */
  | { readonly kind: 'listening' }
  | { readonly kind: 'events'; readonly events: readonly AgentEvent[] }
  | { readonly kind: 'answer'; readonly requestId: string; readonly error?: ErrorData };
