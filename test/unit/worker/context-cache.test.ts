import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory-store';
import type { ConversationStore } from '../../../src/store/store';
import { storeChannelName } from '../../../src/store/store-change';
import { ContextCache, WARM_CONVERSATIONS } from '../../../src/worker/context/context-cache';
import { runRecord } from '../store/records';
import { freshStore } from '../store/store-fixture';

let counter = 0;
const opened: ConversationStore[] = [];
afterEach(() => {
  for (const store of opened.splice(0)) void store.close();
  vi.useRealTimers();
});

/** A load, or a change from another store, comes in a later task: a busy machine is late, never wrong. */
const PATIENCE = { timeout: 15_000 };

/** A store of its own name, its reads of context counted, and a cache over it once loaded. */
async function setUp(
  fill: (store: ConversationStore) => Promise<void> = async () => {},
  open: (name: string) => ConversationStore = (name) => createMemoryStore({ name }),
) {
  counter += 1;
  const name = `context-cache-${counter}`;
  const store = open(name);
  opened.push(store);
  await fill(store);
  const reads = vi.spyOn(store, 'readContext');
  const cache = new ContextCache(store, 11, ['global']);
  // Loaded: a conversation never seen is answered without a read.
  let probe = 0;
  await vi.waitFor(async () => {
    probe += 1;
    expect((await cache.rowsFor(`probe-${probe}`)).guessed).toBe(true);
  }, PATIENCE);
  reads.mockClear();
  /** Another tab's store of the same database, as far as the change channel goes. */
  const otherTab = () => {
    const other = createMemoryStore({ name });
    opened.push(other);
    return other;
  };
  return { store, cache, reads, name, otherTab };
}

const firstStep = (conversationId: string) => ({
  conversationId,
  runId: `run-${conversationId}`,
  messages: [{ role: 'user' as const, content: 'Hello' }],
  run: runRecord({ id: `run-${conversationId}`, conversationId }),
  create: { title: undefined },
});

/** A later step of a stored conversation: `content` as the assistant's answer. */
const laterStep = (conversationId: string, content: string, status?: 'interrupted') => ({
  conversationId,
  runId: `run-${conversationId}`,
  messages: [{ role: 'assistant' as const, content }],
  ...(status ? { status } : {}),
});

/** The seq the store gave a step's only message. */
async function seqOf(written: Promise<{ seq: number }[]>): Promise<number> {
  const [record] = await written;
  if (!record) throw new Error('The step added no message.');
  return record.seq;
}

describe("the worker's context cache", () => {
  it('answers a conversation the store has nothing of with the lasting memories alone, without a read', async () => {
    const { cache, reads } = await setUp(async (store) => {
      await store.saveMemory({ key: 'city', content: 'Lyon' });
      await store.saveMemory({ key: 'user', content: 'Ada', scope: 'user:ada' });
    });

    const { rows, guessed, holds } = await cache.rowsFor('new');

    expect(guessed).toBe(true);
    expect(holds(1)).toBe(true);
    expect(holds(2)).toBe(false);
    // Nothing is stored of it whether or not its input's write failed.
    expect(holds(undefined)).toBe(true);
    expect(rows).toEqual({
      recent: [],
      conversation: undefined,
      memories: [expect.objectContaining({ key: 'city', scope: 'global' })],
    });
    expect(reads).not.toHaveBeenCalled();
  });

  it('reads a conversation that is stored, or has memories of its own, or ran here before', async () => {
    const { cache, reads } = await setUp(async (store) => {
      await store.commitStep(firstStep('stored'));
      await store.saveMemory({ key: 'k', content: 'v', scope: 'conversation:remembered' });
    });

    const stored = await cache.rowsFor('stored');
    expect(stored.guessed).toBe(false);
    expect(stored.rows.recent).toHaveLength(1);
    const remembered = await cache.rowsFor('remembered');
    expect(remembered.guessed).toBe(false);
    expect(remembered.rows.memories).toEqual([
      expect.objectContaining({ scope: 'conversation:remembered' }),
    ]);
    // Its first run is about to write it: the next one reads, even before it did.
    expect((await cache.rowsFor('fresh')).guessed).toBe(true);
    expect((await cache.rowsFor('fresh')).guessed).toBe(false);
    expect(reads).toHaveBeenCalledTimes(3);
  });

  it('forgets the lasting memories at once when its own store changes one, and keeps them again from the next read', async () => {
    const { store, cache, reads } = await setUp();
    await store.saveMemory({ key: 'city', content: 'Lyon' });

    const next = await cache.rowsFor('a');
    expect(next.guessed).toBe(false);
    expect(next.rows.memories).toEqual([expect.objectContaining({ content: 'Lyon' })]);
    const after = await cache.rowsFor('b');
    expect(after.guessed).toBe(true);
    expect(after.rows.memories).toEqual([expect.objectContaining({ content: 'Lyon' })]);
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it('follows what another tab writes: its conversations are read, its lasting memories re-read', async () => {
    const { cache, otherTab } = await setUp();
    const other = otherTab();
    await other.commitStep(firstStep('elsewhere'));
    await other.saveMemory({ key: 'city', content: 'Oslo' });

    // As the changes arrive (a busy machine delivers them late, never wrongly).
    await vi.waitFor(async () => {
      expect((await cache.rowsFor(`after-${crypto.randomUUID()}`)).guessed).toBe(false);
    }, PATIENCE);
    expect((await cache.rowsFor('elsewhere')).guessed).toBe(false);
  });

  it('reads the ids and lasting memories again on a message that is not a change, and guesses again after', async () => {
    const { store, cache, name } = await setUp(async (store) => {
      await store.saveMemory({ key: 'city', content: 'Lyon' });
    });
    const idReads = vi.spyOn(store, 'conversationIds');
    const memoryReads = vi.spyOn(store, 'listMemories');
    const forger = new BroadcastChannel(storeChannelName(name));
    onTestFinished(() => forger.close());
    forger.postMessage({ table: 'memories', conversationId: 42 });

    await vi.waitFor(() => expect(idReads).toHaveBeenCalledTimes(1), PATIENCE);
    expect(memoryReads).toHaveBeenCalledWith({ scopes: ['global'] });
    await vi.waitFor(async () => {
      expect((await cache.rowsFor(`later-${crypto.randomUUID()}`)).guessed).toBe(true);
    }, PATIENCE);
    const { rows } = await cache.rowsFor('last');
    expect(rows.memories).toEqual([expect.objectContaining({ content: 'Lyon' })]);
  });

  it('leaves out a lasting memory that expired since it was kept', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const { cache } = await setUp(async (store) => {
      await store.saveMemory({ key: 'soon', content: 'gone', expiresAt: 1_000_500 });
      await store.saveMemory({ key: 'stays', content: 'here' });
    });
    expect((await cache.rowsFor('a')).rows.memories).toHaveLength(2);

    vi.setSystemTime(1_000_500);

    const { rows, guessed } = await cache.rowsFor('b');
    expect(guessed).toBe(true);
    expect(rows.memories).toEqual([expect.objectContaining({ key: 'stays' })]);
  });

  it('does not keep lasting memories from a read that a change to them overtook', async () => {
    // Stored before the cache started: it reads the conversation's rows.
    const { store, cache, reads } = await setUp(async (store) => {
      await store.commitStep(firstStep('stored'));
    });
    const read = store.readContext.bind(store);
    reads.mockImplementationOnce(async (request) => {
      const rows = await read(request);
      // Saved after the read, before its answer is kept.
      await store.saveMemory({ key: 'city', content: 'Rome' });
      return rows;
    });

    expect((await cache.rowsFor('stored')).rows.memories).toEqual([]);

    const next = await cache.rowsFor('new');
    expect(next.guessed).toBe(false);
    expect(next.rows.memories).toEqual([expect.objectContaining({ content: 'Rome' })]);
  });

  describe("a stored conversation's rows, kept after its runs here", () => {
    it('are read once, follow the steps written here, and are a guess that holds for the next input', async () => {
      const { store, cache, reads } = await setUp(async (store) => {
        await store.commitStep(firstStep('c'));
      });
      const read = await cache.rowsFor('c');
      expect(read.guessed).toBe(false);
      expect(reads).toHaveBeenCalledTimes(1);
      // The run that read them answers; a cut-short answer is not part of any context.
      await store.commitStep(laterStep('c', 'Hi there'));
      await store.commitStep(laterStep('c', 'Half an ans', 'interrupted'));

      const kept = await cache.rowsFor('c');
      expect(kept.guessed).toBe(true);
      expect(reads).toHaveBeenCalledTimes(1);
      expect(kept.rows.recent.map((record) => [record.seq, record.message.content])).toEqual([
        [1, 'Hello'],
        [2, 'Hi there'],
      ]);
      expect(kept.rows.conversation).toMatchObject({ id: 'c', lastSeq: 3 });
      // The next run's input goes in after the interrupted answer.
      const inputSeq = await seqOf(store.commitStep({ ...laterStep('c', 'And?'), runId: 'r2' }));
      expect(inputSeq).toBe(4);
      expect(kept.holds(inputSeq)).toBe(true);
      expect(kept.holds(5)).toBe(false);
      // A write that failed confirms nothing: the store is read again.
      expect(kept.holds(undefined)).toBe(false);
    });

    it('are taken as the run asks for them, whenever its input is written', async () => {
      const { store, cache } = await setUp(async (store) => {
        await store.commitStep(firstStep('c'));
      });
      await cache.rowsFor('c');

      // The in-memory store writes at once: before the cache's answer is made.
      const asked = cache.rowsFor('c');
      const inputSeq = await seqOf(store.commitStep({ ...laterStep('c', 'And?'), runId: 'r2' }));
      const guess = await asked;

      expect(guess.guessed).toBe(true);
      expect(guess.rows.recent.map((record) => record.seq)).toEqual([1]);
      expect(guess.holds(inputSeq)).toBe(true);
    });

    it('are kept from the first input of a conversation created here, when the store had nothing else of it', async () => {
      const { store, cache, reads } = await setUp(async (store) => {
        await store.saveMemory({ key: 'k', content: 'v', scope: 'conversation:remembered' });
      });
      for (const id of ['fresh', 'remembered']) {
        await cache.rowsFor(id);
        await store.commitStep(firstStep(id));
        await store.commitStep(laterStep(id, 'Hi'));
      }
      reads.mockClear();

      const fresh = await cache.rowsFor('fresh');
      expect(fresh.guessed).toBe(true);
      expect(fresh.rows.recent.map((record) => record.message.content)).toEqual(['Hello', 'Hi']);
      expect(fresh.rows.conversation).toMatchObject({ id: 'fresh', lastSeq: 2 });
      expect(reads).not.toHaveBeenCalled();
      // Its memory was there before the conversation: its rows are read, and kept from then.
      const remembered = await cache.rowsFor('remembered');
      expect(remembered.guessed).toBe(false);
      expect(remembered.rows.memories).toEqual([expect.objectContaining({ key: 'k' })]);
      expect((await cache.rowsFor('remembered')).guessed).toBe(true);
    });

    it('keep no more messages than a context reads', async () => {
      const { store, cache } = await setUp(async (store) => {
        await store.commitStep(firstStep('c'));
      });
      await cache.rowsFor('c');
      for (let index = 0; index < 20; index++)
        await store.commitStep(laterStep('c', `answer ${index}`));

      const { rows, guessed } = await cache.rowsFor('c');
      expect(guessed).toBe(true);
      // The cache was made for 11 (a window of 10, and one more).
      expect(rows.recent.map((record) => record.seq)).toEqual(
        Array.from({ length: 11 }, (_, index) => 11 + index),
      );
      expect(rows.recent).toEqual(await store.recentMessages('c', 11));
    });

    it('do not hold when this worker rewrote the summary before the next input, and are read again after', async () => {
      const { store, cache, reads } = await setUp(async (store) => {
        await store.commitStep(firstStep('c'));
      });
      await cache.rowsFor('c');
      await store.updateSummary('c', 'Said hello.', 1);

      const guess = await cache.rowsFor('c');
      const inputSeq = await seqOf(store.commitStep(laterStep('c', 'And?')));
      expect(guess.guessed && guess.holds(inputSeq)).toBe(false);
      const next = await cache.rowsFor('c');
      expect(next.guessed).toBe(false);
      expect(next.rows.conversation).toMatchObject({ summary: 'Said hello.' });
      expect(reads).toHaveBeenCalledTimes(2);
    });

    it('are dropped at once when a memory of the conversation changes here', async () => {
      const { store, cache, reads } = await setUp(async (store) => {
        await store.commitStep(firstStep('c'));
      });
      await cache.rowsFor('c');
      await store.saveMemory({ key: 'city', content: 'Oslo', scope: 'conversation:c' });

      const next = await cache.rowsFor('c');
      expect(next.guessed).toBe(false);
      expect(next.rows.memories).toEqual([expect.objectContaining({ content: 'Oslo' })]);
      expect(reads).toHaveBeenCalledTimes(2);
    });

    it(`are kept for the ${WARM_CONVERSATIONS} conversations run last`, async () => {
      const ids = Array.from({ length: WARM_CONVERSATIONS + 1 }, (_, index) => `c${index}`);
      const { cache, reads } = await setUp(async (store) => {
        for (const id of ids) await store.commitStep(firstStep(id));
      });
      for (const id of ids) await cache.rowsFor(id);
      expect(reads).toHaveBeenCalledTimes(ids.length);

      // The first was dropped for the last; the others are still kept.
      for (const id of ids.slice(1)) expect((await cache.rowsFor(id)).guessed).toBe(true);
      expect((await cache.rowsFor('c0')).guessed).toBe(false);
    });

    it('never hold after another tab changed the conversation, whether or not its change was heard yet', async () => {
      const fixture = freshStore();
      opened.push(fixture.store);
      const { store, cache } = await setUp(
        async (store) => {
          await store.commitStep(firstStep('c'));
        },
        () => fixture.store,
      );
      const other = fixture.reopen();
      opened.push(other);
      const keep = async () => {
        await cache.rowsFor('c');
        expect((await cache.rowsFor('c')).guessed).toBe(true);
      };
      /** The next run here: its guess, then its input's write. */
      const nextRun = async () => {
        const guess = await cache.rowsFor('c');
        const inputSeq = await seqOf(store.commitStep({ ...laterStep('c', 'And?'), runId: 'r' }));
        return guess.guessed && guess.holds(inputSeq);
      };

      await keep();
      await other.updateSummary('c', 'Rewritten elsewhere.', 1);
      expect(await nextRun()).toBe(false);

      await keep();
      await other.saveMemory({ key: 'city', content: 'Oslo', scope: 'conversation:c' });
      expect(await nextRun()).toBe(false);

      await keep();
      await other.commitStep(laterStep('c', 'An answer from elsewhere'));
      expect(await nextRun()).toBe(false);

      // Deleted and written again to the same length: only the token tells them apart.
      await keep();
      const { lastSeq } = (await store.getConversation('c')) ?? { lastSeq: 0 };
      await other.deleteConversation('c');
      await other.commitStep(firstStep('c'));
      for (let seq = 2; seq <= lastSeq; seq++) await other.commitStep(laterStep('c', `${seq}`));
      expect(await nextRun()).toBe(false);

      // With nothing from elsewhere, the kept rows hold again.
      await keep();
      expect(await nextRun()).toBe(true);
    });
  });
});
