import { type StoreChange, storeChangesIn, storeChannelName } from '../protocol/memory';

export { type StoreChange, type StoreTable, storeChannelName } from '../protocol/memory';

/** The changes a deleted or replaced conversation posts. */
export function cascadeChanges(conversationId: string): StoreChange[] {
  return (
    ['messages', 'runs', 'audit', 'proposals', 'memories', 'attachments', 'conversations'] as const
  ).map((table) => ({ table, conversationId }));
}

/**
 * Told of changes to the store. `undefined` stands for a change it cannot name (a message
 * on the channel that is not a change): anything may have changed.
 */
export type ChangeListener = (change: StoreChange | undefined) => void;

/** Posts store changes, and tells its listeners of them and of other stores' changes. */
export interface ChangeFeed {
  /** Posts what one write changed, in one message. */
  post(changes: readonly StoreChange[]): void;
  /**
   * Calls `listener` with each change posted here, at once, and each change other stores
   * of the same name post (other tabs, other workers), as it arrives. Returns its removal.
   */
  listen(listener: ChangeListener): () => void;
  /** Releases the channel; nothing is posted or heard after. */
  close(): void;
}

/**
 * A change feed for the store named `storeName`, on the `BroadcastChannel`
 * `airlock:<name>`, opened on first use. Where `BroadcastChannel` does not exist (old
 * runtimes, some test environments) posting reaches only this feed's own listeners.
 */
export function createChangeFeed(storeName: string): ChangeFeed {
  let channel: BroadcastChannel | undefined;
  let closed = false;
  const listeners = new Set<ChangeListener>();
  const open = () => {
    if (closed || typeof BroadcastChannel === 'undefined') return undefined;
    if (!channel) {
      channel = new BroadcastChannel(storeChannelName(storeName));
      // A channel never hears its own posts: those reach the listeners in `post`.
      channel.onmessage = ({ data }: MessageEvent<unknown>) => {
        const changes = storeChangesIn(data) ?? [undefined];
        for (const change of changes) for (const listener of listeners) listener(change);
      };
    }
    return channel;
  };
  return {
    post(changes) {
      if (closed || changes.length === 0) return;
      // One message per write: a lone change as itself, several as their list.
      open()?.postMessage(changes.length === 1 ? changes[0] : changes);
      for (const change of changes) for (const listener of listeners) listener(change);
    },
    listen(listener) {
      open();
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closed = true;
      listeners.clear();
      channel?.close();
      channel = undefined;
    },
  };
}
