/**
 * What a page-thread agent does with each step that Airlock does in its worker: it writes
 * the step's messages to IndexedDB before the next model call. Plain IndexedDB, one
 * transaction per step; the request clone and the store's serialisation run on the page.
 */

/** The database the page-thread loop stores its runs in; Airlock's rows are elsewhere. */
const DATABASE = 'airlock-demo-page-loop';

/** An open step store. */
export interface StepStore {
  /** Stores `messages` as the next rows of `conversationId`, in one transaction. */
  append(conversationId: string, firstSeq: number, messages: readonly unknown[]): Promise<void>;
  close(): void;
}

/** Opens (creating on first use) the page-thread loop's database. */
export function openStepStore(): Promise<StepStore> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore('messages', { keyPath: ['conversationId', 'seq'] });
    };
    request.onerror = () => reject(request.error);
    request.onsuccess = () => {
      const database = request.result;
      resolve({
        append: (conversationId, firstSeq, messages) =>
          new Promise((done, fail) => {
            const transaction = database.transaction('messages', 'readwrite');
            const rows = transaction.objectStore('messages');
            messages.forEach((message, index) => {
              rows.put({ conversationId, seq: firstSeq + index, message, storedAt: Date.now() });
            });
            transaction.oncomplete = () => done();
            transaction.onerror = () => fail(transaction.error);
          }),
        close: () => database.close(),
      });
    };
  });
}
