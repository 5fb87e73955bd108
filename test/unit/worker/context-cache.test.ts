import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createMemoryStore } from '../../../src/memory/memory-store';
import type { ConversationStore } from '../../../src/memory/store';
import { storeChannelName } from '../../../src/memory/store-change';
import { ContextCache } from '../../../src/worker/context-cache';
import { runRecord } from '../memory/records';

let counter = 0;
const opened: ConversationStore[] = [];
afterEach(() => {
  for (const store of opened.splice(0)) void store.close();
  vi.useRealTimers();
});

/** A load, or a change from another store, comes in a later task: a busy machine is late, never wrong. */
const PATIENCE = { timeout: 15_000 };

/** A store of its own name, its reads of context counted, and a cache over it once loaded. */
async function setUp(fill: (store: ConversationStore) => Promise<void> = async () => {}) {
  counter += 1;
  const name = `context-cache-${counter}`;
  const store = createMemoryStore({ name });
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

describe("the worker's context cache", () => {
  it('answers a conversation the store has nothing of with the lasting memories alone, without a read', async () => {
    const { cache, reads } = await setUp(async (store) => {
      await store.saveMemory({ key: 'city', content: 'Lyon' });
      await store.saveMemory({ key: 'user', content: 'Ada', scope: 'user:ada' });
    });

    const { rows, guessed } = await cache.rowsFor('new');

    expect(guessed).toBe(true);
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
    const { store, cache, reads } = await setUp();
    await store.commitStep(firstStep('stored'));
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
});
