// The Web Lock that lets one run at a time use a conversation, across every tab of the origin.
import { AirlockError } from '../../errors/airlock-error';

/** The Web Lock that one run of a conversation holds, across every tab of the origin. */
export function conversationLockName(database: string, conversationId: string): string {
  return `airlock:${database}:conversation:${conversationId}`;
}

/**
 * Runs `work` while holding the conversation's lock, or fails at once with
 * `conversation-busy` when another run (in this tab or another) holds it.
 */
export async function withConversationLock<T>(name: string, work: () => Promise<T>): Promise<T> {
  return navigator.locks.request(name, { ifAvailable: true }, async (lock) => {
    if (!lock) {
      throw new AirlockError(
        'conversation-busy',
        'Another run is using this conversation; try again when it ends.',
        {
          details: { lock: name },
        },
      );
    }
    return work();
  });
}

/** Names of the locks held right now by any tab, to tell a live run from an interrupted one. */
export async function heldLockNames(): Promise<Set<string>> {
  const snapshot = await navigator.locks.query();
  return new Set((snapshot.held ?? []).flatMap((lock) => (lock.name ? [lock.name] : [])));
}
