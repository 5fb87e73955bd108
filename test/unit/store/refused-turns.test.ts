import { describe, expect, it } from 'vitest';
import type { StoredConversation } from '../../../src/store/conversation-revision';
import type { ConversationStore } from '../../../src/store/store';
import type { StoreChange } from '../../../src/store/store-change';
import { runRecord } from './records';
import { freshStore, storesClosedAfterEach } from './store-fixture';

const setUp = storesClosedAfterEach(freshStore);

/** Commits one message of run `runId` to `c` (creating it on the first). */
async function say(store: ConversationStore, runId: string, content: string, create = false) {
  await store.commitStep({
    conversationId: 'c',
    runId,
    messages: [{ role: 'user', content }],
    run: runRecord({ id: runId, conversationId: 'c' }),
    ...(create ? { create: { title: undefined } } : {}),
  });
}

describe('a refused turn in the store', () => {
  it("marks only the run's messages, leaves them out of every context read, and lists them", async () => {
    const store = setUp();
    await say(store, 'run_1', 'kept', true);
    await say(store, 'run_2', 'refused input');
    await say(store, 'run_2', 'refused step');
    await say(store, 'run_3', 'kept after');
    const before = (await store.getConversation('c')) as StoredConversation;
    const changes: (StoreChange | undefined)[] = [];
    store.onChange((change) => changes.push(change));

    expect(await store.refuseRun('c', 'run_2')).toEqual([2, 3]);

    expect((await store.listMessages('c')).map((row) => [row.seq, row.status])).toEqual([
      [1, 'complete'],
      [2, 'refused'],
      [3, 'refused'],
      [4, 'complete'],
    ]);
    const contents = (rows: { message: { content: unknown } }[]) =>
      rows.map((row) => row.message.content);
    expect(contents(await store.recentMessages('c', 10))).toEqual(['kept', 'kept after']);
    expect(contents(await store.messagesBetween('c', 0, 4))).toEqual(['kept', 'kept after']);
    const context = await store.readContext({
      conversationId: 'c',
      recent: 10,
      scopes: [],
      create: false,
    });
    expect(contents(context.recent)).toEqual(['kept', 'kept after']);
    // A kept context must be found out of date: the row has a new revision, not a new lastSeq.
    const after = (await store.getConversation('c')) as StoredConversation;
    expect(after.lastSeq).toBe(before.lastSeq);
    expect(after.revision).not.toBe(before.revision);
    expect(changes).toEqual(
      expect.arrayContaining([
        { table: 'messages', conversationId: 'c' },
        { table: 'conversations', conversationId: 'c' },
      ]),
    );
  });

  it('marks nothing, and changes nothing, a second time or for a run or conversation it does not have', async () => {
    const store = setUp();
    await say(store, 'run_1', 'kept', true);
    await say(store, 'run_2', 'refused');
    expect(await store.refuseRun('c', 'run_2')).toEqual([2]);
    const revision = ((await store.getConversation('c')) as StoredConversation).revision;
    expect(await store.refuseRun('c', 'run_2')).toEqual([]);
    expect(await store.refuseRun('c', 'run_unknown')).toEqual([]);
    expect(await store.refuseRun('missing', 'run_2')).toEqual([]);
    expect(((await store.getConversation('c')) as StoredConversation).revision).toBe(revision);
  });

  it('exports and imports a refused turn as refused', async () => {
    const store = setUp();
    await say(store, 'run_1', 'refused', true);
    await store.refuseRun('c', 'run_1');
    const json = await store.exportConversation('c');
    await store.deleteConversation('c');
    await store.importConversation(json);
    expect((await store.listMessages('c')).map((row) => row.status)).toEqual(['refused']);
    expect(await store.recentMessages('c', 10)).toEqual([]);
  });
});
