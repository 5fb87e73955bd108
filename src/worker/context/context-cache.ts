import type { StoredConversation } from '../../store/conversation-revision';
import { compareMemories, conversationScope, isExpired } from '../../store/memory-rules';
import type {
  ConversationStore,
  MemoryRecord,
  MemoryScope,
  MessageRecord,
  WrittenStep,
} from '../../store/store';
import type { StoreChange } from '../../store/store-change';

/** What a run's context reads from the store: `readContext`'s answer. */
export type ContextRows = Awaited<ReturnType<ConversationStore['readContext']>>;

/** A new run's rows, and whether they came from the cache (a guess, to be checked). */
export interface RowsForRun {
  readonly rows: ContextRows;
  readonly guessed: boolean;
  /**
   * Whether the guess held: the run's input, stored as `inputSeq`, was written to the
   * conversation as the rows have it. Always true for rows read from the store. When the
   * write failed (`undefined`), a new conversation's guess holds (nothing is stored either
   * way) and kept rows do not (the store is read again, and may fail as the write did).
   */
  readonly holds: (inputSeq: number | undefined) => boolean;
}

/** How many conversations' contexts are kept after their runs (the most recently run ones). */
export const WARM_CONVERSATIONS = 16;

/**
 * A stored conversation's rows as the store had them after the last step this worker
 * wrote to it: what its next run reads, but for the lasting memories (kept apart).
 */
interface WarmRows {
  /** The newest complete messages, oldest first, at most `#recent` (replaced, never changed in place). */
  recent: readonly MessageRecord[];
  /** Its row: `lastSeq` and `revision` are what a later write must find for these to hold. */
  conversation: StoredConversation;
  /** The memories of its own scope. */
  readonly own: readonly MemoryRecord[];
  /** Set once dropped: a write or change these rows do not have came. */
  spoiled: boolean;
}

/** A read under way, spoiled by a change to lasting memories that may have come after it read them. */
interface PendingRead {
  spoiled: boolean;
}

/**
 * What a run's context reads, kept in the agent worker so that its model request need not
 * wait for IndexedDB: the ids of the conversations the store has anything of (read once),
 * the memories of the lasting scopes, and the rows of the conversations run lately here
 * (`WARM_CONVERSATIONS`). A run of an id the store has nothing of starts from the lasting
 * memories alone.
 *
 * The store's changes keep these up to date: this worker's own at once, other tabs' and
 * workers' as they arrive. A change made in another tab may be heard of after a run has
 * started here, so rows from here are a guess, which the run checks against its input's
 * write, and reads again when it did not hold:
 * - for a new conversation, the input must be its first message (seq 1);
 * - for a kept one, the write must find the conversation's `lastSeq` and revision token as
 *   kept (`StoredConversation`): another run's messages move the first, and every other
 *   change to what a context reads (a summary, a memory of its scope, the conversation
 *   deleted and created again or replaced) gives it a new token, in the same transaction.
 * Kept rows follow this worker's own steps (`onStepWritten`); a store without it keeps none.
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
  /** Kept rows by conversation id, the least recently run first. */
  readonly #warm = new Map<string, WarmRows>();
  /** Whether the store tells of its steps, which keeping rows needs. */
  readonly #keepsWarm: boolean;

  constructor(store: ConversationStore, recent: number, lastingScopes: readonly MemoryScope[]) {
    this.#store = store;
    this.#recent = recent;
    this.#lastingScopes = lastingScopes;
    // Listens as long as the store is open: closing it ends its listeners.
    store.onChange((change) => this.#changed(change));
    this.#keepsWarm = store.onStepWritten !== undefined;
    store.onStepWritten?.((step) => this.#stepWritten(step));
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
   * Drops the rows kept of `conversationId`: this worker changed them in place (a refused
   * turn marked), so its next run reads them from the store rather than sending a guess.
   */
  drop(conversationId: string): void {
    this.#drop(conversationId);
  }

  /**
   * The rows a new run of `conversationId` starts from: for a conversation the store has
   * nothing of, the lasting memories kept (a guess), else what the store has.
   */
  async rowsFor(conversationId: string): Promise<RowsForRun> {
    // Taken before anything is awaited: the run's input may be written meanwhile, and the
    // rows must be those its write is checked against.
    const warm = this.#warm.get(conversationId);
    const kept = warm && { recent: warm.recent, conversation: warm.conversation };
    // An agent's first run comes moments after it started: waiting for the ids costs less
    // than reading the rows.
    await this.#loading;
    const lasting = this.#lasting;
    const isNew = this.seemsNew(conversationId);
    // The run is about to write it.
    this.#touch(conversationId);
    const now = Date.now();
    const unexpired = (memory: MemoryRecord) => !isExpired(memory, now);
    if (isNew && lasting) {
      const memories = lasting.filter(unexpired);
      return {
        rows: { recent: [], conversation: undefined, memories },
        guessed: true,
        holds: (inputSeq) => inputSeq === undefined || inputSeq === 1,
      };
    }
    if (warm && kept && !warm.spoiled && lasting) {
      // The most recently run last.
      this.#warm.delete(conversationId);
      this.#warm.set(conversationId, warm);
      const nextSeq = kept.conversation.lastSeq + 1;
      return {
        rows: {
          recent: [...kept.recent],
          conversation: kept.conversation,
          memories: [...warm.own, ...lasting].filter(unexpired).sort(compareMemories),
        },
        guessed: true,
        // The write that stored the input found the conversation as kept (else it was dropped).
        holds: (inputSeq) => inputSeq === nextSeq && !warm.spoiled,
      };
    }
    return { rows: await this.#read(conversationId), guessed: false, holds: () => true };
  }

  /**
   * Reads the rows; when no change came meanwhile, the lasting memories they hold are kept,
   * and a stored conversation's rows too.
   */
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
      // One transaction read them, so they hold as of the row's seq and token, whatever
      // came meanwhile: the next write checks those.
      if (this.#keepsWarm && rows.conversation)
        this.#keep(conversationId, {
          recent: rows.recent,
          conversation: rows.conversation,
          own: rows.memories.filter((memory) => memory.scope === own),
          spoiled: false,
        });
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

  #keep(conversationId: string, rows: WarmRows): void {
    this.#drop(conversationId);
    this.#warm.set(conversationId, rows);
    for (const [id] of this.#warm) {
      if (this.#warm.size <= WARM_CONVERSATIONS) break;
      this.#drop(id);
    }
  }

  #drop(conversationId: string): void {
    const warm = this.#warm.get(conversationId);
    if (!warm) return;
    warm.spoiled = true;
    this.#warm.delete(conversationId);
  }

  /**
   * A step this worker wrote: kept rows it found as they are take its messages; kept rows
   * it did not (another tab's messages or change came first) are dropped. A conversation
   * the step created is kept from it.
   */
  #stepWritten({ conversationId, added, before, after, createdEmpty }: WrittenStep): void {
    const complete = () => added.filter((record) => record.status === 'complete');
    if (!before) {
      // Created by this step. With nothing else of it stored, the step's messages are all
      // its next run reads (but the lasting memories).
      if (createdEmpty)
        this.#keep(conversationId, {
          recent: complete().slice(-this.#recent),
          conversation: after,
          own: [],
          spoiled: false,
        });
      else this.#drop(conversationId);
      return;
    }
    const warm = this.#warm.get(conversationId);
    if (!warm) return;
    if (
      before.lastSeq !== warm.conversation.lastSeq ||
      before.revision !== warm.conversation.revision
    ) {
      this.#drop(conversationId);
      return;
    }
    if (added.length > 0) warm.recent = [...warm.recent, ...complete()].slice(-this.#recent);
    warm.conversation = after;
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
      for (const [id] of this.#warm) this.#drop(id);
      this.#known = undefined;
      this.#load();
      return;
    }
    const { table, conversationId } = change;
    if (table !== 'conversations' && table !== 'messages' && table !== 'memories') return;
    // Messages and rows are checked at the next write (this worker's steps post them too);
    // a memory of a conversation's own, or its deletion, drops its kept rows at once.
    if (table === 'memories' && conversationId !== undefined) this.#drop(conversationId);
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
