import { conversationScope, isExpired } from '../memory/memory-rules';
import type { ConversationStore, MemoryRecord, MemoryScope } from '../memory/store';
import type { StoreChange } from '../memory/store-change';

/** What a run's context reads from the store: `readContext`'s answer. */
export type ContextRows = Awaited<ReturnType<ConversationStore['readContext']>>;

/** A new run's rows, and whether they came from the cache (a guess, to be checked). */
export interface RowsForRun {
  readonly rows: ContextRows;
  readonly guessed: boolean;
}

/** A read under way, spoiled by a change to lasting memories that may have come after it read them. */
interface PendingRead {
  spoiled: boolean;
}

/**
 * What the first run of a new conversation would read, kept in the agent worker so that
 * its model request need not wait for IndexedDB: the ids of the conversations the store has
 * anything of (read once), and the memories of the lasting scopes. A run of any other id
 * starts from those memories alone.
 *
 * The store's changes keep both up to date: this worker's own at once, other tabs' and
 * workers' as they arrive. A conversation created in another tab may be heard of after a
 * run of it has started here, so rows from here are a guess: the run checks it against its
 * input's write (the input is the conversation's first message, seq 1), and reads again
 * when it was not.
 *
 * Rows of conversations that have messages are not kept: a change to one in place (a
 * message or summary rewritten) could not be caught by that check, so such runs read.
 */
export class ContextCache {
  readonly #store: ConversationStore;
  /** How many of the newest messages a context reads. */
  readonly #recent: number;
  /** The scopes every run's context reads besides its conversation's own. */
  readonly #lastingScopes: readonly MemoryScope[];
  /** Ids of the conversations the store has anything of; undefined until read. */
  #known: Set<string> | undefined;
  /** Ids touched while `#known` is being read; undefined when it is not. */
  #touchedWhileLoading: Set<string> | undefined;
  /** Settles when the read of the ids and lasting memories under way has. */
  #loading: Promise<void> | undefined;
  /** The memories of the lasting scopes as last read (each use leaves out those expired since); undefined until read. */
  #lasting: readonly MemoryRecord[] | undefined;
  readonly #reads = new Set<PendingRead>();

  constructor(store: ConversationStore, recent: number, lastingScopes: readonly MemoryScope[]) {
    this.#store = store;
    this.#recent = recent;
    this.#lastingScopes = lastingScopes;
    // Listens as long as the store is open: closing it ends its listeners.
    store.onChange((change) => this.#changed(change));
    this.#load();
  }

  /**
   * Whether the store has nothing of `conversationId`, as far as this cache knows (no row,
   * no memories of its own); false while the ids are being read. A guess, as `rowsFor`'s.
   */
  seemsNew(conversationId: string): boolean {
    return this.#known !== undefined && !this.#known.has(conversationId);
  }

  /**
   * The rows a new run of `conversationId` starts from: for a conversation the store has
   * nothing of, the lasting memories kept (a guess), else what the store has.
   */
  async rowsFor(conversationId: string): Promise<RowsForRun> {
    // An agent's first run comes moments after it started: waiting for the ids costs less
    // than reading the rows.
    await this.#loading;
    const lasting = this.#lasting;
    const isNew = this.seemsNew(conversationId);
    // The run is about to write it.
    this.#touch(conversationId);
    if (isNew && lasting) {
      const now = Date.now();
      const memories = lasting.filter((memory) => !isExpired(memory, now));
      return { rows: { recent: [], conversation: undefined, memories }, guessed: true };
    }
    return { rows: await this.#read(conversationId), guessed: false };
  }

  /** Reads the rows; when no change came meanwhile, the lasting memories they hold are kept. */
  async #read(conversationId: string): Promise<ContextRows> {
    const read: PendingRead = { spoiled: false };
    this.#reads.add(read);
    try {
      const own = conversationScope(conversationId);
      const rows = await this.#store.readContext({
        conversationId,
        recent: this.#recent,
        scopes: [own, ...this.#lastingScopes],
        create: false,
      });
      if (!read.spoiled) this.#lasting = rows.memories.filter((memory) => memory.scope !== own);
      return rows;
    } finally {
      this.#reads.delete(read);
    }
  }

  /**
   * Reads the ids of the conversations stored and the lasting memories: once, and again
   * after a change it cannot name. Runs wait for it; when it fails, every run reads its rows
   * (slower, never wrong).
   */
  #load(): void {
    const touched = new Set<string>();
    this.#touchedWhileLoading = touched;
    const read: PendingRead = { spoiled: false };
    this.#reads.add(read);
    this.#loading = Promise.all([
      this.#store.conversationIds(),
      this.#store.listMemories({ scopes: this.#lastingScopes }),
    ])
      .then(([ids, lasting]) => {
        if (!read.spoiled) this.#lasting = lasting;
        // Unless a later load (after a change it could not name) replaced this one.
        if (this.#touchedWhileLoading === touched) this.#known = new Set([...ids, ...touched]);
      })
      .catch(() => undefined)
      .finally(() => {
        this.#reads.delete(read);
        if (this.#touchedWhileLoading !== touched) return;
        this.#touchedWhileLoading = undefined;
        this.#loading = undefined;
      });
  }

  /** A conversation about to be written (a run's) or changed: it is no longer new. */
  #touch(conversationId: string): void {
    this.#known?.add(conversationId);
    this.#touchedWhileLoading?.add(conversationId);
  }

  #changed(change: StoreChange | undefined): void {
    if (!change) {
      // Anything may have changed: start again.
      this.#forget();
      this.#known = undefined;
      this.#load();
      return;
    }
    const { table, conversationId } = change;
    if (table !== 'conversations' && table !== 'messages' && table !== 'memories') return;
    if (conversationId !== undefined) this.#touch(conversationId);
    // Memories of no conversation are lasting ones: every context reads them.
    else if (table === 'memories') this.#forget();
    else this.#changed(undefined);
  }

  /** Drops the lasting memories kept, and spoils every read under way. */
  #forget(): void {
    this.#lasting = undefined;
    for (const read of this.#reads) read.spoiled = true;
  }
}
