import { type StoreChange, storeChannelName } from '../protocol/memory';

export { type StoreChange, type StoreTable, storeChannelName } from '../protocol/memory';

/** The changes a deleted or replaced conversation posts. */
export function cascadeChanges(conversationId: string): StoreChange[] {
  return (
    ['messages', 'runs', 'audit', 'proposals', 'memories', 'attachments', 'conversations'] as const
  ).map((table) => ({ table, conversationId }));
}

/** Posts store changes; the channel is opened on the first post and released by `close`. */
export interface ChangeFeed {
  post(changes: readonly StoreChange[]): void;
  close(): void;
}

/**
 * A change feed for the store named `storeName`. Where `BroadcastChannel` does not exist
 * (old runtimes, some test environments) posting does nothing: notifications are a
 * convenience for other views, never needed for correctness.
 */
export function createChangeFeed(storeName: string): ChangeFeed {
  let channel: BroadcastChannel | undefined;
  let closed = false;
  return {
    post(changes) {
      if (closed || typeof BroadcastChannel === 'undefined') return;
      channel ??= new BroadcastChannel(storeChannelName(storeName));
      for (const change of changes) channel.postMessage(change);
    },
    close() {
      closed = true;
      channel?.close();
      channel = undefined;
    },
  };
}
