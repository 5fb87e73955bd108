import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type { MemoryProposal, MemoryRecord } from '../../../src/store/store';
import { freshStore, storesClosedAfterEach } from './store-fixture';

const setUp = storesClosedAfterEach(freshStore);

/** The check a real caller passes: here every stored row is taken as it is. */
const asStored = (row: unknown) => row as MemoryProposal;

function saveProposal(
  id: string,
  conversationId: string,
  createdAt: number,
  key = 'city',
): MemoryProposal {
  return {
    id,
    conversationId,
    runId: 'run-1',
    createdAt,
    change: 'save',
    memory: { key, content: `The user lives in ${key}.`, scope: 'global' },
  };
}

describe('memory proposals', () => {
  it('lists proposals oldest first, of one conversation or all, and accepts one by saving its memory', async () => {
    const store = setUp();
    await store.ensureConversation('a', undefined);
    await store.ensureConversation('b', undefined);
    const newer = saveProposal('p2', 'a', 20, 'town');
    const older = saveProposal('p1', 'a', 10);
    const other = saveProposal('p3', 'b', 15, 'country');
    await store.saveProposals([newer, older]);
    await store.saveProposals([other]);

    expect(await store.listProposals()).toEqual([older, other, newer]);
    expect(await store.listProposals({ conversationId: 'a' })).toEqual([older, newer]);

    const saved = await store.acceptProposal('p1', asStored, 100);
    expect(saved).toMatchObject({
      key: 'city',
      content: 'The user lives in city.',
      createdAt: 100,
    });
    expect(await store.listMemories()).toEqual([saved]);
    expect(await store.listProposals({ conversationId: 'a' })).toEqual([newer]);
  });

  it('lists proposals made at the same moment in the order of their ids', async () => {
    const store = setUp();
    await store.ensureConversation('a', undefined);
    const second = saveProposal('proposal_01', 'a', 5, 'town');
    const first = saveProposal('proposal_00', 'a', 5);
    await store.saveProposals([second, first]);

    expect(await store.listProposals()).toEqual([first, second]);
    expect(await store.listProposals({ conversationId: 'a' })).toEqual([first, second]);
  });

  it('accepts a delete proposal by deleting its memory, also when the memory is already gone', async () => {
    const store = setUp();
    await store.ensureConversation('a', undefined);
    const memory = await store.saveMemory({ key: 'diet', content: 'Eats meat.' }, 1);
    const deletion = (id: string): MemoryProposal => ({
      id,
      conversationId: 'a',
      runId: 'run-1',
      createdAt: 2,
      change: 'delete',
      memory,
      reason: 'The user no longer eats meat.',
    });
    await store.saveProposals([deletion('d1'), deletion('d2')]);

    expect(await store.acceptProposal('d1', asStored)).toBeUndefined();
    expect(await store.listMemories()).toEqual([]);
    expect(await store.acceptProposal('d2', asStored)).toBeUndefined();
    expect(await store.listProposals()).toEqual([]);
  });

  it('deletes nothing for a delete proposal whose memory changed since, or that names another memory’s id, and keeps it', async () => {
    const store = setUp();
    await store.ensureConversation('a', undefined);
    const city = await store.saveMemory({ key: 'city', content: 'Lyon.' }, 1);
    const pin = await store.saveMemory({ key: 'pin', content: 'Keep.' }, 1);
    const deletion = (id: string, memory: MemoryRecord): MemoryProposal => ({
      id,
      conversationId: 'a',
      runId: 'run-1',
      createdAt: 2,
      change: 'delete',
      memory,
      reason: 'Moved.',
    });
    await store.saveProposals([
      deletion('changed', city),
      deletion('other', { ...city, id: pin.id }),
    ]);
    const edited = await store.updateMemory(city.id, { content: 'Paris.' });

    for (const id of ['changed', 'other'])
      await expect(store.acceptProposal(id, asStored)).rejects.toMatchObject({
        code: 'proposal-outdated',
        details: { proposalId: id },
      });
    expect(await store.listMemories()).toEqual(expect.arrayContaining([edited, pin]));
    expect((await store.listProposals()).map((row) => row.id)).toEqual(['changed', 'other']);
  });

  it('accepts a proposal once: a second accept, as from another tab, is not-found', async () => {
    const store = setUp();
    await store.ensureConversation('a', undefined);
    await store.saveProposals([saveProposal('p1', 'a', 1)]);
    await store.acceptProposal('p1', asStored);

    await expect(store.acceptProposal('p1', asStored)).rejects.toMatchObject({ code: 'not-found' });
    await expect(store.acceptProposal('never', asStored)).rejects.toMatchObject({
      code: 'not-found',
    });
    expect(await store.listMemories()).toHaveLength(1);
  });

  it('applies nothing and keeps the proposal when its check or the memory rules refuse it', async () => {
    const store = setUp();
    await store.ensureConversation('a', undefined);
    const refused: MemoryProposal = {
      ...saveProposal('p2', 'a', 2),
      change: 'save',
      memory: { key: '', content: 'No key.' },
    };
    await store.saveProposals([saveProposal('p1', 'a', 1), refused]);
    const bad = new AirlockError('storage-failed', 'A stored proposals row is not valid.');

    await expect(
      store.acceptProposal('p1', () => {
        throw bad;
      }),
    ).rejects.toBe(bad);
    await expect(store.acceptProposal('p2', asStored)).rejects.toMatchObject({
      code: 'invalid-input',
    });
    expect(await store.listMemories()).toEqual([]);
    expect((await store.listProposals()).map((row) => row.id)).toEqual(['p1', 'p2']);
  });

  it('refuses a batch holding a proposal id already stored, or twice, as storage-failed, storing none of it', async () => {
    const store = setUp();
    await store.ensureConversation('a', undefined);
    await store.saveProposals([saveProposal('p1', 'a', 1)]);

    await expect(
      store.saveProposals([saveProposal('p2', 'a', 2), saveProposal('p1', 'a', 3)]),
    ).rejects.toMatchObject({ code: 'storage-failed' });
    await expect(
      store.saveProposals([saveProposal('p3', 'a', 4), saveProposal('p3', 'a', 5)]),
    ).rejects.toMatchObject({ code: 'storage-failed' });
    expect((await store.listProposals()).map((row) => row.id)).toEqual(['p1']);
  });

  it('dismisses a proposal without applying it; an unknown one is no fault', async () => {
    const store = setUp();
    await store.ensureConversation('a', undefined);
    await store.saveProposals([saveProposal('p1', 'a', 1)]);

    await store.dismissProposal('p1');
    await store.dismissProposal('p1');
    expect(await store.listProposals()).toEqual([]);
    expect(await store.listMemories()).toEqual([]);
  });

  it("refuses proposals for a conversation that is not stored, and deletes a conversation's with it", async () => {
    const store = setUp();
    await expect(store.saveProposals([saveProposal('p1', 'gone', 1)])).rejects.toMatchObject({
      code: 'not-found',
    });
    await store.ensureConversation('a', undefined);
    await store.ensureConversation('b', undefined);
    await store.saveProposals([saveProposal('p1', 'a', 1), saveProposal('p2', 'b', 2)]);

    await store.deleteConversation('a');

    expect((await store.listProposals()).map((row) => row.id)).toEqual(['p2']);
  });
});
