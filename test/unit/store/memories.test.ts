import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type { MemoryInput } from '../../../src/store/store';
import { freshStore, storesClosedAfterEach } from './store-fixture';

const setUp = storesClosedAfterEach(freshStore);

describe('long-term memories', () => {
  it('saves a memory with its defaults: global scope, middle importance, no expiry', async () => {
    const store = setUp();
    const saved = await store.saveMemory({ key: 'name', content: 'Ada' }, 100);
    expect(saved).toEqual({
      id: expect.stringMatching(/^mem_[0-9a-f]{32}$/),
      key: 'name',
      content: 'Ada',
      importance: 0.5,
      scope: 'global',
      createdAt: 100,
      updatedAt: 100,
    });
    expect(await store.listMemories()).toEqual([saved]);
  });

  it('replaces a memory of the same scope and key, keeping its id and creation time', async () => {
    const store = setUp();
    const first = await store.saveMemory({ key: 'city', content: 'Paris', scope: 'user:u1' }, 100);
    const other = await store.saveMemory({ key: 'city', content: 'Oslo', scope: 'user:u2' }, 150);
    const replaced = await store.saveMemory(
      { key: 'city', content: 'Rome', scope: 'user:u1', importance: 0.9 },
      200,
    );
    expect(replaced).toEqual({ ...first, content: 'Rome', importance: 0.9, updatedAt: 200 });
    expect(other.id).not.toBe(first.id);
    expect(await store.listMemories({ includeExpired: true })).toEqual([replaced, other]);
  });

  it('lists the most important first, then the most recently updated, of the scopes asked', async () => {
    const store = setUp();
    const low = await store.saveMemory({ key: 'a', content: '', importance: 0.1 }, 1);
    const olderHigh = await store.saveMemory(
      { key: 'b', content: '', importance: 0.8, scope: 'user:u' },
      2,
    );
    const newerHigh = await store.saveMemory({ key: 'c', content: '', importance: 0.8 }, 3);
    const elsewhere = await store.saveMemory(
      { key: 'd', content: '', importance: 1, scope: 'conversation:x' },
      4,
    );
    expect(await store.listMemories({ now: 10 })).toEqual([elsewhere, newerHigh, olderHigh, low]);
    expect(await store.listMemories({ scopes: ['global', 'user:u', 'global'], now: 10 })).toEqual([
      newerHigh,
      olderHigh,
      low,
    ]);
    expect(await store.listMemories({ scopes: [], now: 10 })).toEqual([]);
  });

  it('leaves expired memories out unless asked, and prunes exactly those', async () => {
    const store = setUp();
    const forever = await store.saveMemory({ key: 'forever', content: '' }, 1);
    const expired = await store.saveMemory({ key: 'expired', content: '', expiresAt: 50 }, 1);
    const expiresNow = await store.saveMemory({ key: 'now', content: '', expiresAt: 100 }, 1);
    const later = await store.saveMemory({ key: 'later', content: '', expiresAt: 101 }, 1);
    const keys = (memories: { key: string }[]) => memories.map((memory) => memory.key).sort();
    expect(keys(await store.listMemories({ now: 100 }))).toEqual(['forever', 'later']);
    expect(keys(await store.listMemories({ now: 100, includeExpired: true }))).toEqual(
      keys([forever, expired, expiresNow, later]),
    );
    expect(await store.pruneExpired(100)).toBe(2);
    expect(keys(await store.listMemories({ includeExpired: true }))).toEqual(['forever', 'later']);
    expect(await store.pruneExpired(100)).toBe(0);
  });

  it('updates a memory in place, and refuses a key another memory of its scope has', async () => {
    const store = setUp();
    const tea = await store.saveMemory({ key: 'drink', content: 'tea' }, 1);
    await store.saveMemory({ key: 'food', content: 'rice' }, 1);
    const updated = await store.updateMemory(tea.id, {
      content: 'coffee',
      importance: 1,
      expiresAt: 5_000,
    });
    expect(updated).toMatchObject({
      id: tea.id,
      key: 'drink',
      content: 'coffee',
      importance: 1,
      expiresAt: 5_000,
      createdAt: 1,
    });
    expect(updated.updatedAt).toBeGreaterThan(1);
    await expect(store.updateMemory(tea.id, { key: 'food' })).rejects.toMatchObject({
      code: 'invalid-input',
    });
    await expect(store.updateMemory(tea.id, { importance: 3 })).rejects.toMatchObject({
      code: 'invalid-input',
    });
    await expect(store.updateMemory('mem_missing', { content: 'x' })).rejects.toMatchObject({
      code: 'not-found',
    });
    expect(await store.updateMemory(tea.id, { key: 'beverage' })).toMatchObject({
      key: 'beverage',
      content: 'coffee',
    });
  });

  it('vets the updated row before writing it: a row the check refuses is not written', async () => {
    const store = setUp();
    const tea = await store.saveMemory({ key: 'drink', content: 'tea' }, 1);
    const seen: unknown[] = [];
    const refusal = new AirlockError('storage-failed', "Not of the table's shape.");
    const refuse = (row: unknown): never => {
      seen.push(row);
      throw refusal;
    };
    await expect(store.updateMemory(tea.id, { content: 'coffee' }, refuse)).rejects.toBe(refusal);
    expect(seen).toEqual([{ ...tea, content: 'coffee', updatedAt: expect.any(Number) }]);
    expect(await store.listMemories()).toEqual([tea]);
    const passed = await store.updateMemory(tea.id, { content: 'milk' }, (row) => ({
      ...(row as typeof tea),
      content: 'milk, checked',
    }));
    expect(passed.content).toBe('milk, checked');
    expect(await store.listMemories()).toEqual([passed]);
  });

  it('deletes a memory, and deleting one already gone is not an error', async () => {
    const store = setUp();
    const saved = await store.saveMemory({ key: 'k', content: 'v' });
    await store.deleteMemory(saved.id);
    await store.deleteMemory(saved.id);
    expect(await store.listMemories({ includeExpired: true })).toEqual([]);
  });

  it.each<[string, MemoryInput]>([
    ['an empty key', { key: ' ', content: 'v' }],
    ['content that is not text', { key: 'k', content: 42 as unknown as string }],
    ['importance above 1', { key: 'k', content: 'v', importance: 1.5 }],
    ['importance that is not a number', { key: 'k', content: 'v', importance: Number.NaN }],
    ['an unknown scope', { key: 'k', content: 'v', scope: 'team:x' as 'global' }],
    ['a scope without an id', { key: 'k', content: 'v', scope: 'user:' }],
    [
      'an expiry that is not a time',
      { key: 'k', content: 'v', expiresAt: Number.POSITIVE_INFINITY },
    ],
  ])('refuses a memory with %s and stores nothing', async (_, input) => {
    const store = setUp();
    await expect(store.saveMemory(input)).rejects.toMatchObject({ code: 'invalid-input' });
    expect(await store.listMemories({ includeExpired: true })).toEqual([]);
  });
});
