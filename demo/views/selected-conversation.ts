/** Which conversation was open, kept in localStorage so a reload opens it again. */

const STORAGE_KEY = 'airlock-demo.conversation';

/** The conversation open on the last visit, if storage has it. */
export function readSelectedConversation(): string | undefined {
  try {
    return localStorage.getItem(STORAGE_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Remembers `id` as the open conversation. */
export function saveSelectedConversation(id: string): void {
  try {
    localStorage.setItem(STORAGE_KEY, id);
  } catch {
    // Storage may be off; the newest conversation opens next time instead.
  }
}
