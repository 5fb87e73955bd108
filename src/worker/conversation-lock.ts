import { AirlockError } from '../errors/airlock-error';
import { settledLater } from '../runtime/settled-later';

/** The Web Lock that one run of a conversation holds, across every tab of the origin. */
export function conversationLockName(database: string, conversationId: string): string {
  return `airlock:${database}:conversation:${conversationId}`;
}

/** A conversation's lock, asked for at once and held until released. */
export interface ConversationLock {
  /**
   * Settles once the lock is held; fails `conversation-busy` at once when another run (in
   * this tab or another) holds it. Marked handled: a run that ends before it waits for the
   * lock leaves no unhandled rejection.
   */
  readonly held: Promise<void>;
  /** Lets the lock go; one still asked for is given up as soon as it is granted. Idempotent. */
  release(): void;
}

/**
 * Asks for the conversation's lock without waiting for it: a run asks as soon as it knows
 * its conversation, and reads and checks its input while the lock manager answers.
 */
export function requestConversationLock(name: string): ConversationLock {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const held = settledLater(
    new Promise<void>((resolve, reject) => {
      navigator.locks
        .request(name, { ifAvailable: true }, (lock) => {
          if (!lock) {
            reject(
              new AirlockError(
                'conversation-busy',
                'Another run is using this conversation; try again when it ends.',
                { details: { lock: name } },
              ),
            );
            return undefined;
          }
          resolve();
          return released;
        })
        // The request itself failed (a worker being torn down): the run cannot hold the lock.
        .catch(reject);
    }),
  );
  return { held, release };
}

/** Runs `work` once `lock` is held, and lets the lock go when it ends. */
export async function withConversationLock<T>(
  lock: ConversationLock,
  work: () => Promise<T>,
): Promise<T> {
  try {
    await lock.held;
    return await work();
  } finally {
    lock.release();
  }
}

/** Names of the locks held right now by any tab, to tell a live run from an interrupted one. */
export async function heldLockNames(): Promise<Set<string>> {
  const snapshot = await navigator.locks.query();
  return new Set((snapshot.held ?? []).flatMap((lock) => (lock.name ? [lock.name] : [])));
}
