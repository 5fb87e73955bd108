import { describe, expect, it } from 'vitest';
import type { StoredConversation } from '../../../src/store/conversation-revision';
import type { ConversationStore, MemoryProposal, WrittenStep } from '../../../src/store/store';
import { runRecord } from './records';
import { freshStore, storesClosedAfterEach } from './store-fixture';

const setUp = storesClosedAfterEach(freshStore);

const asStored = (row: unknown) => row as MemoryProposal;

/** The conversation's revision token as stored. */
async function revisionOf(store: ConversationStore, id: string): Promise<string | undefined> {
  return ((await store.getConversation(id)) as StoredConversation | undefined)?.revision;
}

/** A step of `conversationId` with one user message, which creates the conversation unless `later`. */
const step = (conversationId: string, content = 'Hello', later = false) => ({
  conversationId,
  runId: `run-${conversationId}`,
  messages: [{ role: 'user' as const, content }],
  run: runRecord({ id: `run-${conversationId}`, conversationId }),
  ...(later ? {} : { create: { title: undefined } }),
});

describe("a conversation's revision token", () => {
  it('is given when the conversation is created, and steps keep it while they tell each write before it settles', async () => {
    const store = setUp();
    const written: WrittenStep[] = [];
    const stop = store.onStepWritten?.((change) => written.push(change));
    expect(stop).toBeTypeOf('function');

    const [input] = await store.commitStep(step('c'));
    // Heard before the write settled.
    expect(written).toHaveLength(1);
    const token = await revisionOf(store, 'c');
    expect(token).toMatch(/^rev_[0-9a-f]{24}$/);
    expect(written[0]).toEqual({
      conversationId: 'c',
      added: [input],
      before: undefined,
      after: expect.objectContaining({ lastSeq: 1, revision: token }),
      createdEmpty: true,
    });

    const [answer] = await store.commitStep(step('c', 'Hi', true));
    expect(await revisionOf(store, 'c')).toBe(token);
    expect(written[1]).toEqual({
      conversationId: 'c',
      added: [answer],
      before: expect.objectContaining({ lastSeq: 1, revision: token }),
      after: expect.objectContaining({ lastSeq: 2, revision: token }),
    });
    // A checkpoint alone leaves the row as it was.
    await store.putRun(runRecord({ id: 'run-c', conversationId: 'c', status: 'finished' }));
    expect(written[2]).toMatchObject({ added: [], before: { lastSeq: 2 }, after: { lastSeq: 2 } });

    stop?.();
    await store.commitStep(step('c', 'Again', true));
    expect(written).toHaveLength(3);
  });

  it('tells whether a conversation a step created had memories of its own already', async () => {
    const store = setUp();
    const written: WrittenStep[] = [];
    store.onStepWritten?.((change) => written.push(change));
    await store.saveMemory({ key: 'k', content: 'v', scope: 'conversation:remembered' });
    await store.saveMemory({ key: 'g', content: 'global' });
    await store.saveMemory({ key: 'k', content: 'v', scope: 'conversation:fresh-but-longer' });

    await store.commitStep(step('remembered'));
    await store.commitStep(step('fresh'));
    await store.commitStep({ ...step('fresh', 'Again', true), runId: 'r2' });

    expect(written.map((change) => [change.conversationId, change.createdEmpty])).toEqual([
      ['remembered', false],
      ['fresh', true],
      ['fresh', undefined],
    ]);
  });

  it('changes with every other change to what a context reads of it, and only then', async () => {
    const store = setUp();
    await store.commitStep(step('c'));
    await store.commitStep(step('other'));
    const tokens = [await revisionOf(store, 'c')];
    const changed = async (change: () => Promise<unknown>) => {
      await change();
      const token = await revisionOf(store, 'c');
      const isNew = !tokens.includes(token);
      tokens.push(token);
      return isNew;
    };

    expect(await changed(() => store.updateSummary('c', 'Said hello.', 1))).toBe(true);
    const own = 'conversation:c';
    expect(await changed(() => store.saveMemory({ key: 'k', content: 'v', scope: own }))).toBe(
      true,
    );
    const [memory] = await store.listMemories({ scopes: [own] });
    if (!memory) throw new Error('The memory was not saved.');
    expect(await changed(() => store.updateMemory(memory.id, { content: 'w' }))).toBe(true);
    expect(await changed(() => store.deleteMemory(memory.id))).toBe(true);
    await store.saveProposals([
      {
        id: 'p1',
        conversationId: 'c',
        runId: 'run-c',
        createdAt: 1,
        change: 'save',
        memory: { key: 'city', content: 'Oslo', scope: own },
      },
    ]);
    expect(await changed(() => store.acceptProposal('p1', asStored))).toBe(true);

    // None of these is read by c's context.
    expect(await changed(() => store.saveMemory({ key: 'g', content: 'global' }))).toBe(false);
    expect(
      await changed(() =>
        store.saveMemory({ key: 'k', content: 'v', scope: 'conversation:other' }),
      ),
    ).toBe(false);
    expect(await changed(() => store.renameConversation('c', 'Greetings'))).toBe(false);
    expect(await changed(() => store.deleteMemory('no-such-memory'))).toBe(false);
  });

  it('is new when the conversation is deleted and created again, or replaced by an import, and never leaves the store in an export', async () => {
    const store = setUp();
    await store.commitStep(step('c'));
    const first = await revisionOf(store, 'c');
    const exported = await store.exportConversation('c');
    expect(exported.conversation).not.toHaveProperty('revision');

    await store.importConversation(exported, { replace: true });
    const imported = await revisionOf(store, 'c');
    expect(imported).toMatch(/^rev_[0-9a-f]{24}$/);
    expect(imported).not.toBe(first);

    await store.deleteConversation('c');
    await store.commitStep(step('c'));
    const again = await revisionOf(store, 'c');
    expect(again).toMatch(/^rev_[0-9a-f]{24}$/);
    expect([first, imported]).not.toContain(again);
  });
});
