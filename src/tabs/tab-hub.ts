import { type FromTabHub, MAX_TAB_CHANNEL_NAME_CHARS, type ToTabHub } from '../protocol/tab-hub';

/**
 * The most channels one client may hold open at once. An agent worker holds one per watch and
 * per watched run, plus one: only a client flooding the hub gets near it, and its opens past
 * it are ignored.
 */
const MAX_CHANNELS_PER_CLIENT = 10_000;

/** One client's channel, open on the hub's channel `name`. */
interface Subscription {
  readonly client: Client;
  readonly channel: number;
  readonly name: string;
}

/** A connected port and the channels it opened, by the client's own numbers. */
interface Client {
  readonly port: MessagePort;
  readonly channels: Map<number, Subscription>;
  greeted: boolean;
}

/**
 * The router of the tab hub: what one client posts on a channel reaches every other channel
 * of that name, in the order it was posted, whichever client opened it (a client's own other
 * channels of that name included, as `BroadcastChannel` does within a context). It trusts no
 * client: every message is parsed and one that is not of the wire is dropped; a client can
 * only post on, and close, channels it opened.
 */
export class TabHub {
  readonly #byName = new Map<string, Set<Subscription>>();
  readonly #locks: LockManager | undefined;

  /** `locks` tells the hub when a client is gone; without it a gone client's channels stay until closed. */
  constructor(locks: LockManager | undefined) {
    this.#locks = locks;
  }

  /** Serves a client on `port`. */
  connect(port: MessagePort): void {
    const client: Client = { port, channels: new Map(), greeted: false };
    port.onmessage = ({ data }: MessageEvent<unknown>) => this.#receive(client, data);
  }

  /** The channels open on the hub's channel `name` (for tests and diagnostics). */
  openCount(name: string): number {
    return this.#byName.get(name)?.size ?? 0;
  }

  #receive(client: Client, data: unknown): void {
    const message = parseToTabHub(data);
    if (message === undefined) return;
    switch (message.kind) {
      case 'hello':
        this.#greet(client, message.lock);
        return;
      case 'open':
        this.#open(client, message.channel, message.name);
        return;
      case 'post':
        this.#post(client, message.channel, message.data);
        return;
      case 'close':
        this.#close(client, message.channel);
        return;
    }
  }

  /** Drops the client's channels once its lock comes free: its worker, or its tab, is gone. */
  #greet(client: Client, lock: string): void {
    if (client.greeted || this.#locks === undefined) return;
    client.greeted = true;
    this.#locks.request(lock, () => this.#drop(client)).catch(() => this.#drop(client));
  }

  #open(client: Client, channel: number, name: string): void {
    if (client.channels.has(channel) || client.channels.size >= MAX_CHANNELS_PER_CLIENT) return;
    const subscription: Subscription = { client, channel, name };
    client.channels.set(channel, subscription);
    let named = this.#byName.get(name);
    if (named === undefined) {
      named = new Set();
      this.#byName.set(name, named);
    }
    named.add(subscription);
  }

  #post(client: Client, channel: number, data: unknown): void {
    const from = client.channels.get(channel);
    if (from === undefined) return;
    for (const to of this.#byName.get(from.name) ?? []) {
      if (to === from) continue;
      to.client.port.postMessage({
        kind: 'message',
        channel: to.channel,
        data,
      } satisfies FromTabHub);
    }
  }

  #close(client: Client, channel: number): void {
    const subscription = client.channels.get(channel);
    if (subscription === undefined) return;
    client.channels.delete(channel);
    const named = this.#byName.get(subscription.name);
    named?.delete(subscription);
    if (named?.size === 0) this.#byName.delete(subscription.name);
  }

  #drop(client: Client): void {
    for (const channel of [...client.channels.keys()]) this.#close(client, channel);
    client.port.onmessage = null;
    client.port.close();
  }
}

/** A client's message, or undefined when it is not one of the wire. */
export function parseToTabHub(data: unknown): ToTabHub | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const fields = data as Record<string, unknown>;
  const { kind, channel } = fields;
  if (kind === 'hello') return isName(fields.lock) ? { kind, lock: fields.lock } : undefined;
  if (!isChannelNumber(channel)) return undefined;
  if (kind === 'open')
    return isName(fields.name) ? { kind, channel, name: fields.name } : undefined;
  if (kind === 'post') return { kind, channel, data: fields.data };
  if (kind === 'close') return { kind, channel };
  return undefined;
}

function isName(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length > 0 && value.length <= MAX_TAB_CHANNEL_NAME_CHARS
  );
}

function isChannelNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
