/**
 * The wire of the tab hub: the one place where the agent workers of an origin's tabs meet.
 * The hub is a `SharedWorker` the app starts (its entry calls `serveTabs()`); each page hands
 * its agent worker a port to it, and the agent workers open named channels over that port,
 * as they would open `BroadcastChannel`s. A name is no authority here: only a port is, and a
 * port to the hub is something only a document of the origin can make (dedicated workers,
 * the tool workers among them, have no `SharedWorker`), so a tool can neither hear, post on
 * nor answer for a run's relay. Types only: the hub parses every message on arrival.
 */

/** The longest channel name the hub accepts; the relay's names are a database and an id. */
export const MAX_TAB_CHANNEL_NAME_CHARS = 1_024;

/** Client → hub, on the client's port. `channel` numbers the client's own channels. */
export type ToTabHub =
  /**
   * The client holds the Web Lock `lock` while it lives: once the hub is granted it, the
   * client is gone (its tab closed, its worker ended) and its channels are dropped.
   */
  | { readonly kind: 'hello'; readonly lock: string }
  /** Opens the client's channel `channel` on the hub's channel `name`. */
  | { readonly kind: 'open'; readonly channel: number; readonly name: string }
  /** Delivers `data` to every other open channel of the same name, the client's own included. */
  | { readonly kind: 'post'; readonly channel: number; readonly data: unknown }
  /** Closes the client's channel `channel`. */
  | { readonly kind: 'close'; readonly channel: number };

/** Hub → client: `data` posted on the hub's channel that the client's `channel` is open on. */
export interface FromTabHub {
  readonly kind: 'message';
  readonly channel: number;
  readonly data: unknown;
}
