import type { FromTabHub, ToTabHub } from '../protocol/tab-hub';
import { randomId } from '../runtime/random-id';
import { TabHub } from './tab-hub';

/**
 * A named channel of the tab hub: the part of `BroadcastChannel` the relay uses. What it
 * posts reaches every other channel open on its name, each sender's messages in order.
 */
export interface TabChannel {
  onmessage: ((event: { readonly data: unknown }) => void) | null;
  /** Posts `data` (structured-cloned, as `postMessage` does); nothing once closed. */
  postMessage(data: unknown): void;
  close(): void;
}

/** Where an agent worker opens its tab channels. */
export interface TabChannels {
  /** Opens a channel on `name`. */
  open(name: string): TabChannel;
  /** True when the channels reach other tabs (a hub's port was given), false when only this worker's own. */
  readonly acrossTabs: boolean;
  /** Closes every channel and lets the hub forget this client. */
  close(): void;
}

/** Channels over `port`, a port to the app's tab hub (`serveTabs`), shared by the origin's tabs. */
export function tabChannelsOver(port: MessagePort): TabChannels {
  return new HubChannels(port, true);
}

/**
 * Channels that reach this worker's own only: a hub of its own over a `MessageChannel`, so a
 * watch of this agent still sees this agent's runs when the app started no tab hub.
 */
export function ownTabChannels(): TabChannels {
  const { port1, port2 } = new MessageChannel();
  new TabHub(undefined).connect(port1);
  return new HubChannels(port2, false);
}

/** The prefix of the Web Lock a hub client holds while it lives (the hub waits for it). */
const CLIENT_LOCK_PREFIX = 'airlock:tab-hub-client:';

class HubChannels implements TabChannels {
  readonly acrossTabs: boolean;
  readonly #port: MessagePort;
  readonly #channels = new Map<number, TabChannel>();
  #nextChannel = 0;
  #closed = false;
  #releaseLock: () => void = () => {};

  constructor(port: MessagePort, acrossTabs: boolean) {
    this.acrossTabs = acrossTabs;
    this.#port = port;
    port.onmessage = ({ data }: MessageEvent<unknown>) => {
      const message = parseFromTabHub(data);
      if (message) this.#channels.get(message.channel)?.onmessage?.({ data: message.data });
    };
    if (acrossTabs) this.#holdClientLock();
  }

  open(name: string): TabChannel {
    const channel = this.#nextChannel++;
    const send = (message: ToTabHub) => {
      if (!this.#closed && this.#channels.has(channel)) this.#port.postMessage(message);
    };
    const opened: TabChannel = {
      onmessage: null,
      postMessage: (data) => send({ kind: 'post', channel, data }),
      close: () => {
        send({ kind: 'close', channel });
        this.#channels.delete(channel);
      },
    };
    this.#channels.set(channel, opened);
    send({ kind: 'open', channel, name });
    return opened;
  }

  close(): void {
    if (this.#closed) return;
    for (const channel of [...this.#channels.values()]) channel.close();
    this.#closed = true;
    this.#port.onmessage = null;
    this.#port.close();
    this.#releaseLock();
  }

  /**
   * Holds a lock of this client's own while it lives, and tells the hub its name: the hub
   * is granted it once this worker (or its tab) is gone, and drops its channels then.
   */
  #holdClientLock(): void {
    if (typeof navigator === 'undefined' || !navigator.locks) return;
    const lock = `${CLIENT_LOCK_PREFIX}${randomId('client')}`;
    navigator.locks
      .request(lock, () => {
        if (this.#closed) return;
        this.#port.postMessage({ kind: 'hello', lock } satisfies ToTabHub);
        return new Promise<void>((release) => {
          this.#releaseLock = release;
        });
      })
      // Only a worker being torn down fails to take a lock no one else names: the hub then
      // keeps this client's channels until they are closed.
      .catch(() => undefined);
  }
}

function parseFromTabHub(data: unknown): FromTabHub | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { kind, channel } = data as Record<string, unknown>;
  if (kind !== 'message' || typeof channel !== 'number') return undefined;
  return { kind, channel, data: (data as { data?: unknown }).data };
}
