import Dexie from 'dexie';
import {
  IDBDatabase as FakeDatabase,
  IDBIndex as FakeIndex,
  IDBObjectStore as FakeObjectStore,
  IDBKeyRange,
} from 'fake-indexeddb';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { estimateMessageTokens } from '../../../src/model/estimate-tokens';
import type { ChatMessage } from '../../../src/protocol/chat';
import type { ConversationStore, MemoryRecord } from '../../../src/store/store';
import { type StoreChange, storeChannelName } from '../../../src/store/store-change';
import {
  assistantCalls,
  assistantSays,
  auditRecord,
  runRecord,
  toolAnswers,
  userSays,
} from './records';
import { dump, freshStore } from './store-fixture';

const opened: ConversationStore[] = [];
/** A fresh store, closed after the test. */
function setUp() {
  const fixture = freshStore();
  opened.push(fixture.store);
  return {
    ...fixture,
    reopen: () => {
      const store = fixture.reopen();
      opened.push(store);
      return store;
    },
  };
}

afterEach(() => {
  for (const store of opened.splice(0)) store.close();
  vi.restoreAllMocks();
});

/** Counts the rows IndexedDB hands back (through `get`, `getAll` or a cursor) while `action` runs. */
async function countRowsRead<T>(action: () => Promise<T>): Promise<{ value: T; rows: number }> {
  let rows = 0;
  const watchGetAll = (request: IDBRequest<unknown[]>) =>
    request.addEventListener('success', () => {
      rows += request.result.length;
    });
  const watchCursor = (request: IDBRequest<IDBCursorWithValue | null>) =>
    request.addEventListener('success', () => {
      if (request.result) rows += 1;
    });
  for (const prototype of [FakeIndex.prototype, FakeObjectStore.prototype] as const) {
    const { getAll, openCursor, get } = prototype;
    vi.spyOn(prototype, 'getAll').mockImplementation(function (
      this: IDBIndex | IDBObjectStore,
      ...args
    ) {
      const request = getAll.apply(this, args);
      watchGetAll(request);
      return request;
    });
    vi.spyOn(prototype, 'openCursor').mockImplementation(function (
      this: IDBIndex | IDBObjectStore,
      ...args
    ) {
      const request = openCursor.apply(this, args);
      watchCursor(request);
      return request;
    });
    vi.spyOn(prototype, 'get').mockImplementation(function (
      this: IDBIndex | IDBObjectStore,
      ...args
    ) {
      const request = get.apply(this, args);
      request.addEventListener('success', () => {
        if (request.result !== undefined) rows += 1;
      });
      return request;
    });
  }
  const value = await action();
  vi.restoreAllMocks();
  return { value, rows };
}

describe('conversations', () => {
  it('creates a conversation once and returns the existing row afterwards', async () => {
    const { store } = setUp();
    const created = await store.ensureConversation('c', 'Trip');
    expect(created).toMatchObject({
      id: 'c',
      title: 'Trip',
      summary: '',
      summarizedThroughSeq: 0,
      lastSeq: 0,
    });
    expect(await store.ensureConversation('c', 'Other title')).toEqual(created);
    expect(await store.getConversation('c')).toEqual(created);
    expect(await store.getConversation('missing')).toBeUndefined();
  });

  it("creates a new run's conversation with its input only when asked, and never renames one", async () => {
    const { store } = setUp();
    const input = { role: 'user' as const, content: 'Plan a trip' };
    const commit = (create?: { title: string | undefined }) =>
      store.commitStep({
        conversationId: 'c',
        runId: 'r1',
        messages: [input],
        ...(create ? { create } : {}),
      });

    // Without `create`, a missing conversation is gone, and nothing is written.
    await expect(commit()).rejects.toMatchObject({ code: 'not-found' });
    expect(await store.getConversation('c')).toBeUndefined();
    const [first] = await commit({ title: 'Trip' });
    expect(first).toMatchObject({ conversationId: 'c', seq: 1, message: input });
    expect(await store.getConversation('c')).toMatchObject({ id: 'c', title: 'Trip', lastSeq: 1 });
    const [second] = await commit({ title: 'Other title' });
    expect(second?.seq).toBe(2);
    expect(await store.getConversation('c')).toMatchObject({ title: 'Trip', lastSeq: 2 });
    expect((await store.listConversations()).map((row) => row.id)).toEqual(['c']);
  });

  it('refuses an empty id as invalid input', async () => {
    const { store } = setUp();
    await expect(store.ensureConversation('')).rejects.toMatchObject({ code: 'invalid-input' });
  });

  it('lists conversations with the most recently active first', async () => {
    const { store } = setUp();
    await store.ensureConversation('old');
    await store.ensureConversation('new');
    await new Promise((resolve) => setTimeout(resolve, 2));
    await store.commitStep({ conversationId: 'old', runId: 'r', messages: [userSays('bump')] });
    expect((await store.listConversations()).map((row) => row.id)).toEqual(['old', 'new']);
  });

  it('lists conversations a page at a time, each once, with those active at the same moment by id', async () => {
    const { store } = setUp();
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    // Created at 1, 2, 2, 2, 3, 4 and 4 ms: the list orders equal times by id, last first.
    for (const [at, id] of [
      [1, 'a'],
      [2, 'b'],
      [2, 'c'],
      [2, 'd'],
      [3, 'e'],
      [4, 'f'],
      [4, 'g'],
    ] as const) {
      vi.setSystemTime(at);
      await store.ensureConversation(id);
    }
    const ids = (rows: readonly { id: string }[]) => rows.map((row) => row.id);
    const all = ids(await store.listConversations());
    expect(all).toEqual(['g', 'f', 'e', 'd', 'c', 'b', 'a']);

    const pages: string[][] = [];
    let after: { id: string; updatedAt: number } | undefined;
    for (;;) {
      const page = await store.listConversations({ limit: 3, after });
      if (page.length === 0) break;
      pages.push(ids(page));
      after = page.at(-1);
    }
    expect(pages).toEqual([['g', 'f', 'e'], ['d', 'c', 'b'], ['a']]);
    // A conversation active since the page before moves to the top instead of showing twice.
    const [first] = await store.listConversations({ limit: 1 });
    vi.setSystemTime(5);
    await store.commitStep({ conversationId: 'f', runId: 'r', messages: [userSays('bump')] });
    expect(ids(await store.listConversations({ limit: 2, after: first }))).toEqual(['e', 'd']);
    // `after` need not be listed any more: the page starts where it would be.
    expect(ids(await store.listConversations({ after: { id: 'zz', updatedAt: 2 } }))).toEqual([
      'd',
      'c',
      'b',
      'a',
    ]);
  });

  it("reads a run's context at once: the newest complete messages, the row, and the live memories of its scopes", async () => {
    const { store } = setUp();
    await store.commitStep({
      conversationId: 'c',
      runId: 'r1',
      messages: [userSays('one'), assistantSays('two'), userSays('three')],
      create: { title: undefined },
    });
    await store.commitStep({
      conversationId: 'c',
      runId: 'r2',
      messages: [assistantSays('cut short')],
      status: 'interrupted',
    });
    await store.saveMemory({ key: 'a', content: 'global fact' });
    await store.saveMemory({ key: 'b', content: 'this conversation', scope: 'conversation:c' });
    await store.saveMemory({ key: 'c', content: 'another one', scope: 'conversation:d' });
    await store.saveMemory({ key: 'd', content: 'gone', expiresAt: Date.now() - 1 });

    const read = await store.readContext({
      conversationId: 'c',
      recent: 2,
      scopes: ['global', 'conversation:c'],
      create: false,
    });
    expect(read.recent.map((row) => [row.seq, row.message.content])).toEqual([
      [2, 'two'],
      [3, 'three'],
    ]);
    expect(read.conversation).toMatchObject({ id: 'c', lastSeq: 4 });
    expect(read.memories.map((memory) => memory.content).sort()).toEqual([
      'global fact',
      'this conversation',
    ]);

    // Not stored: no row, and nothing created, unless asked.
    const missing = { conversationId: 'new', recent: 5, scopes: [], create: false };
    expect(await store.readContext(missing)).toEqual({
      recent: [],
      conversation: undefined,
      memories: [],
    });
    expect(await store.getConversation('new')).toBeUndefined();
    const created = await store.readContext({ ...missing, create: true });
    expect(created.conversation).toMatchObject({ id: 'new', lastSeq: 0 });
    expect(await store.getConversation('new')).toEqual(created.conversation);
    await expect(
      store.readContext({ ...missing, conversationId: '', create: true }),
    ).rejects.toMatchObject({ code: 'invalid-input' });
  });

  it('renames a conversation, and says not-found for one that does not exist', async () => {
    const { store } = setUp();
    await store.ensureConversation('c', 'Before');
    await store.renameConversation('c', 'After');
    expect((await store.getConversation('c'))?.title).toBe('After');
    await expect(store.renameConversation('nope', 'x')).rejects.toMatchObject({
      code: 'not-found',
    });
  });

  it('keeps a summary and the seq it covers, within the messages there are', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    await store.commitStep({
      conversationId: 'c',
      runId: 'r',
      messages: [userSays('a'), assistantSays('b')],
    });
    await store.updateSummary('c', 'They said a and b.', 2);
    expect(await store.getConversation('c')).toMatchObject({
      summary: 'They said a and b.',
      summarizedThroughSeq: 2,
    });
    await expect(store.updateSummary('c', 'too far', 3)).rejects.toMatchObject({
      code: 'invalid-input',
    });
    await expect(store.updateSummary('missing', 's', 0)).rejects.toMatchObject({
      code: 'not-found',
    });
  });

  it('deletes a conversation with its messages, runs, audit records and conversation memories only', async () => {
    const { store } = setUp();
    for (const id of ['gone', 'kept']) {
      await store.ensureConversation(id);
      await store.commitStep({
        conversationId: id,
        runId: `run-${id}`,
        messages: [userSays('hi'), assistantSays('hello')],
        run: runRecord({ id: `run-${id}`, conversationId: id }),
        audit: [auditRecord({ callId: `call-${id}`, conversationId: id, runId: `run-${id}` })],
      });
      await store.saveMemory({ key: 'k', content: id, scope: `conversation:${id}` });
    }
    await store.saveMemory({ key: 'name', content: 'Ada' });
    const kept = await dump(store);

    await store.deleteConversation('gone');

    expect(await store.getConversation('gone')).toBeUndefined();
    expect(await store.listMessages('gone')).toEqual([]);
    expect(await store.listRuns({ conversationId: 'gone' })).toEqual([]);
    expect(await store.listAudit({ conversationId: 'gone' })).toEqual([]);
    expect(await store.listMemories({ scopes: ['conversation:gone'] })).toEqual([]);
    const after = await dump(store);
    expect(after.conversations).toEqual(kept.conversations.filter((row) => row.id === 'kept'));
    expect(after.memories.map((memory) => memory.content).sort()).toEqual(['Ada', 'kept']);
    expect(after.runs.map((run) => run.id)).toEqual(['run-kept']);
    expect(after.audit.map((record) => record.callId)).toEqual(['call-kept']);
    await expect(store.deleteConversation('gone')).resolves.toBeUndefined();
  });
});

describe('committing a step', () => {
  it('numbers messages after the last seq and writes the checkpoint and audit with them', async () => {
    const { store } = setUp();
    const created = await store.ensureConversation('c');
    const first = await store.commitStep({
      conversationId: 'c',
      runId: 'r1',
      messages: [userSays('What is 2+2?')],
    });
    const step = await store.commitStep({
      conversationId: 'c',
      runId: 'r1',
      messages: [assistantCalls('call_1', 'add', '{"a":2,"b":2}'), toolAnswers('call_1', '4')],
      run: runRecord({ id: 'r1', step: 2 }),
      audit: [auditRecord({ callId: 'call_1', runId: 'r1', toolName: 'add' })],
    });
    expect(first.map((record) => record.seq)).toEqual([1]);
    expect(step.map((record) => [record.seq, record.runId, record.status])).toEqual([
      [2, 'r1', 'complete'],
      [3, 'r1', 'complete'],
    ]);
    // Each row carries its message's estimate, so windowing never measures it again.
    expect([...first, ...step].map((record) => record.approxTokens)).toEqual(
      [...first, ...step].map((record) => estimateMessageTokens(record.message)),
    );
    expect(first[0]?.approxTokens).toBeGreaterThan(3);
    expect(await store.listMessages('c')).toEqual([...first, ...step]);
    const conversation = await store.getConversation('c');
    expect(conversation?.lastSeq).toBe(3);
    expect(conversation?.updatedAt).toBeGreaterThanOrEqual(created.updatedAt);
    expect(await store.getRun('r1')).toEqual(runRecord({ id: 'r1', step: 2 }));
    expect(await store.listAudit({ runId: 'r1' })).toEqual([
      auditRecord({ callId: 'call_1', runId: 'r1', toolName: 'add' }),
    ]);
  });

  it('writes nothing when a message cannot be stored', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    await store.commitStep({ conversationId: 'c', runId: 'r0', messages: [userSays('kept')] });
    const before = await dump(store);
    // A function cannot be structured-cloned: the second put fails inside the transaction.
    const unstorable = { role: 'user', content: () => 'no' } as unknown as ChatMessage;
    await expect(
      store.commitStep({
        conversationId: 'c',
        runId: 'r1',
        messages: [userSays('would be seq 2'), unstorable],
        run: runRecord({ id: 'r1' }),
        audit: [auditRecord({ callId: 'x', runId: 'r1' })],
      }),
    ).rejects.toMatchObject({ code: 'storage-failed' });
    expect(await dump(store)).toEqual(before);
  });

  it('rolls back the messages, the seq and the checkpoint when the last write of the step fails', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    const before = await dump(store);
    await expect(
      store.commitStep({
        conversationId: 'c',
        runId: 'r1',
        messages: [userSays('hi'), assistantSays('hello')],
        run: runRecord({ id: 'r1' }),
        audit: [
          auditRecord({ callId: 'ok', runId: 'r1' }),
          auditRecord({ callId: 'bad', runId: 'r1', arguments: () => 1 }),
        ],
      }),
    ).rejects.toMatchObject({ code: 'storage-failed', details: { operation: 'saving a step' } });
    expect(await dump(store)).toEqual(before);
    expect((await store.getConversation('c'))?.lastSeq).toBe(0);
  });

  it('refuses a step for a conversation that does not exist (deleted by another tab) and writes nothing', async () => {
    const { store } = setUp();
    await expect(
      store.commitStep({
        conversationId: 'gone',
        runId: 'r',
        messages: [userSays('hi')],
        run: runRecord({ id: 'r', conversationId: 'gone' }),
      }),
    ).rejects.toMatchObject({ code: 'not-found' });
    expect(await dump(store)).toEqual({
      conversations: [],
      messages: [],
      memories: [],
      runs: [],
      audit: [],
      proposals: [],
    });
  });

  it('refuses a checkpoint of another conversation', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    await expect(
      store.commitStep({
        conversationId: 'c',
        runId: 'r',
        messages: [],
        run: runRecord({ id: 'r', conversationId: 'other' }),
      }),
    ).rejects.toMatchObject({ code: 'invalid-input' });
  });

  it('numbers without gaps or duplicates when two tabs commit to one conversation at once', async () => {
    const { store, reopen } = setUp();
    const otherTab = reopen();
    await store.ensureConversation('c');
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (index % 2 === 0 ? store : otherTab).commitStep({
          conversationId: 'c',
          runId: `r${index}`,
          messages: [userSays(`q${index}`), assistantSays(`a${index}`)],
        }),
      ),
    );
    const messages = await store.listMessages('c');
    expect(messages.map((record) => record.seq)).toEqual(
      Array.from({ length: 40 }, (_, index) => index + 1),
    );
    // Each step's two messages stay together.
    for (let index = 0; index < 40; index += 2)
      expect(messages[index]?.runId).toBe(messages[index + 1]?.runId);
    expect((await store.getConversation('c'))?.lastSeq).toBe(40);
  });

  it('writes steps and checkpoints of many conversations asked for at once, in one transaction', async (context) => {
    // Counted where IndexedDB opens them (watched before the database opens: Dexie keeps the
    // method it found then); the in-memory store has none to count.
    const opened = vi.spyOn(FakeDatabase.prototype, 'transaction');
    const { store, indexedDB } = setUp();
    const ids = Array.from({ length: 20 }, (_, index) => `c${index}`);
    for (const id of [...ids.slice(10), 'p0', 'p1']) await store.ensureConversation(id);
    opened.mockClear();
    const [written] = await Promise.all([
      Promise.all(
        ids.map((id, index) =>
          store.commitStep({
            conversationId: id,
            runId: `r${index}`,
            messages: [userSays(`q${index}`)],
            run: runRecord({ id: `r${index}`, conversationId: id }),
            // The first ten conversations are new: their runs' inputs create them.
            ...(index < 10 ? { create: { title: `t${index}` } } : {}),
          }),
        ),
      ),
      // Progress writes of other runs go in the same transaction.
      store.putRun(runRecord({ id: 'p0', conversationId: 'p0', partialText: 'so far' })),
      store.putRun(runRecord({ id: 'p1', conversationId: 'p1' })),
    ]);
    expect((await store.getRun('p0'))?.partialText).toBe('so far');
    expect(written.map((records) => records.map((record) => record.seq))).toEqual(
      ids.map(() => [1]),
    );
    for (const [index, id] of ids.entries()) {
      expect((await store.listMessages(id)).map((record) => record.message)).toEqual([
        userSays(`q${index}`),
      ]);
      expect((await store.getRun(`r${index}`))?.conversationId).toBe(id);
    }
    expect((await store.getConversation('c3'))?.title).toBe('t3');
    if (indexedDB === undefined) context.skip();
    const writes = opened.mock.calls.filter(([, mode]) => mode === 'readwrite');
    expect(writes).toHaveLength(1);
  });

  it('fails only the steps at fault when steps asked for at once are written together', async () => {
    const { store } = setUp();
    for (const id of ['a', 'b', 'c']) await store.ensureConversation(id);
    const before = await dump(store);
    // A function cannot be structured-cloned: its put fails the transaction it is in.
    const unstorable = { role: 'user', content: () => 'no' } as unknown as ChatMessage;
    const outcomes = await Promise.allSettled([
      store.commitStep({ conversationId: 'a', runId: 'ra', messages: [userSays('kept a')] }),
      store.commitStep({ conversationId: 'gone', runId: 'rg', messages: [userSays('x')] }),
      store.commitStep({ conversationId: 'b', runId: 'rb', messages: [unstorable] }),
      store.commitStep({ conversationId: 'c', runId: 'rc', messages: [userSays('kept c')] }),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect(outcomes[1]).toMatchObject({ reason: { code: 'not-found' } });
    expect(outcomes[2]).toMatchObject({ reason: { code: 'storage-failed' } });
    const stored = async (id: string) => ({
      messages: (await store.listMessages(id)).map((record) => record.message),
      lastSeq: (await store.getConversation(id))?.lastSeq,
    });
    expect(await stored('a')).toEqual({ messages: [userSays('kept a')], lastSeq: 1 });
    expect(await stored('b')).toEqual({ messages: [], lastSeq: 0 });
    expect(await stored('c')).toEqual({ messages: [userSays('kept c')], lastSeq: 1 });
    expect(await store.getConversation('gone')).toBeUndefined();
    const after = await dump(store);
    expect(after.runs).toEqual(before.runs);
  });

  it('writes a new conversation taken for new without reading its row first', async (context) => {
    const read = vi.spyOn(FakeObjectStore.prototype, 'get');
    const { store, indexedDB } = setUp();
    const [input] = await store.commitStep({
      conversationId: 'n',
      runId: 'r',
      messages: [userSays('hello')],
      run: runRecord({ id: 'r', conversationId: 'n' }),
      create: { title: 'new one', likelyNew: true },
    });
    expect(input?.seq).toBe(1);
    expect(await store.getConversation('n')).toMatchObject({ title: 'new one', lastSeq: 1 });
    if (indexedDB === undefined) context.skip();
    const conversationReads = read.mock.contexts.filter(
      (objectStore) => (objectStore as { name?: string }).name === 'conversations',
    );
    // Read back by getConversation only.
    expect(conversationReads).toHaveLength(1);
  });

  it('writes a step whose conversation was wrongly taken for new after what is stored, keeping its row', async () => {
    const { store } = setUp();
    await store.commitStep({
      conversationId: 'c',
      runId: 'r0',
      messages: [userSays('first')],
      create: { title: 'kept' },
    });
    // Asked for together: the wrong guess fails the group's first try, and each is written again.
    const written = await Promise.all([
      store.commitStep({
        conversationId: 'c',
        runId: 'r1',
        messages: [userSays('second')],
        create: { title: 'another title', likelyNew: true },
      }),
      store.commitStep({
        conversationId: 'n',
        runId: 'r2',
        messages: [userSays('really new')],
        create: { title: 'n', likelyNew: true },
      }),
    ]);
    expect(written.map((records) => records.map((record) => record.seq))).toEqual([[2], [1]]);
    expect((await store.listMessages('c')).map((record) => record.message)).toEqual([
      userSays('first'),
      userSays('second'),
    ]);
    expect(await store.getConversation('c')).toMatchObject({ title: 'kept', lastSeq: 2 });
    expect(await store.getConversation('n')).toMatchObject({ title: 'n', lastSeq: 1 });
    // Alone, too.
    const [third] = await store.commitStep({
      conversationId: 'c',
      runId: 'r3',
      messages: [userSays('third')],
      create: { title: 'yet another', likelyNew: true },
    });
    expect(third?.seq).toBe(3);
    expect(await store.getConversation('c')).toMatchObject({ title: 'kept', lastSeq: 3 });
  });

  it('writes steps of one conversation asked for at once in the order asked', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    const written = await Promise.all(
      ['first', 'second', 'third'].map((text) =>
        store.commitStep({ conversationId: 'c', runId: 'r', messages: [userSays(text)] }),
      ),
    );
    expect(written.map((records) => records.map((record) => record.seq))).toEqual([[1], [2], [3]]);
    expect((await store.listMessages('c')).map((record) => record.message)).toEqual([
      userSays('first'),
      userSays('second'),
      userSays('third'),
    ]);
  });

  it('maps a quota error raised by IndexedDB to storage-full', async (context) => {
    const { store, indexedDB } = setUp();
    // IndexedDB's own failure: the in-memory store, run through this suite too, has none.
    if (indexedDB === undefined) context.skip();
    await store.ensureConversation('c');
    vi.spyOn(FakeObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    });
    await expect(store.putRun(runRecord({ id: 'r' }))).rejects.toMatchObject({
      code: 'storage-full',
    });
  });
});

describe('reading messages', () => {
  async function seed(store: ConversationStore, count: number) {
    await store.ensureConversation('c');
    await store.ensureConversation('neighbour');
    await store.commitStep({
      conversationId: 'c',
      runId: 'r',
      messages: Array.from({ length: count }, (_, index) => userSays(`m${index + 1}`)),
    });
    await store.commitStep({
      conversationId: 'c',
      runId: 'r2',
      messages: [assistantSays('partial')],
      status: 'interrupted',
    });
    await store.commitStep({
      conversationId: 'neighbour',
      runId: 'n',
      messages: [userSays('not mine')],
    });
  }

  it('returns the newest complete messages oldest first, skipping interrupted ones', async () => {
    const { store } = setUp();
    await seed(store, 1_000);
    const recent = await store.recentMessages('c', 3);
    expect(recent.map((record) => [record.seq, record.message.content])).toEqual([
      [998, 'm998'],
      [999, 'm999'],
      [1000, 'm1000'],
    ]);
    expect(await store.recentMessages('c', 0)).toEqual([]);
    expect((await store.recentMessages('neighbour', 50)).map((record) => record.seq)).toEqual([1]);
  });

  it('reads only the rows it returns, however long the conversation is', async (context) => {
    const { store, indexedDB } = setUp();
    // Counts rows IndexedDB reads: the in-memory store, run through this suite too, reads none.
    if (indexedDB === undefined) context.skip();
    await seed(store, 1_000);
    const { value, rows } = await countRowsRead(() => store.recentMessages('c', 20));
    expect(value).toHaveLength(20);
    expect(rows).toBe(20);
  });

  it('reads complete messages in a seq range, and every message for display', async () => {
    const { store } = setUp();
    await seed(store, 10);
    expect((await store.messagesBetween('c', 3, 6)).map((record) => record.seq)).toEqual([4, 5, 6]);
    expect((await store.messagesBetween('c', 9, 20)).map((record) => record.seq)).toEqual([10]);
    expect(await store.messagesBetween('c', 6, 6)).toEqual([]);
    const all = await store.listMessages('c');
    expect(all.map((record) => record.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(all.at(-1)?.status).toBe('interrupted');
  });
});

describe('runs and the audit log', () => {
  it('keeps run checkpoints and lists them newest first, by conversation and by status', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    await store.ensureConversation('other');
    await store.putRun(runRecord({ id: 'a', startedAt: 1, status: 'finished' }));
    await store.putRun(runRecord({ id: 'b', startedAt: 3, status: 'awaiting-approval' }));
    await store.putRun(
      runRecord({ id: 'c', startedAt: 2, status: 'running', conversationId: 'other' }),
    );
    await store.putRun(runRecord({ id: 'a', startedAt: 1, status: 'interrupted' }));
    expect(await store.getRun('a')).toEqual(
      runRecord({ id: 'a', startedAt: 1, status: 'interrupted' }),
    );
    expect(await store.getRun('zzz')).toBeUndefined();
    const ids = (runs: { id: string }[]) => runs.map((run) => run.id);
    expect(ids(await store.listRuns())).toEqual(['b', 'c', 'a']);
    expect(ids(await store.listRuns({ conversationId: 'c' }))).toEqual(['b', 'a']);
    expect(ids(await store.listRuns({ statuses: ['running', 'awaiting-approval'] }))).toEqual([
      'b',
      'c',
    ]);
    expect(ids(await store.listRuns({ conversationId: 'c', statuses: ['interrupted'] }))).toEqual([
      'a',
    ]);
  });

  it('refuses to save a run whose conversation was deleted, so no late write brings its rows back', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    await store.putRun(runRecord({ id: 'r', status: 'running' }));
    await store.deleteConversation('c');

    await expect(store.putRun(runRecord({ id: 'r', status: 'running' }))).rejects.toMatchObject({
      code: 'not-found',
    });
    expect(await store.listRuns()).toEqual([]);
    expect(await store.listConversations()).toEqual([]);
  });

  it('lists audit records newest first, by conversation, by run, and up to a limit', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    await store.ensureConversation('d');
    // `at` deliberately out of order: the log is ordered by when records were written.
    await store.commitStep({
      conversationId: 'c',
      runId: 'r1',
      messages: [],
      audit: [
        auditRecord({ callId: '1', runId: 'r1', at: 50 }),
        auditRecord({ callId: '2', runId: 'r1', at: 10 }),
      ],
    });
    await store.commitStep({
      conversationId: 'd',
      runId: 'r2',
      messages: [],
      audit: [auditRecord({ callId: '3', conversationId: 'd', runId: 'r2' })],
    });
    await store.commitStep({
      conversationId: 'c',
      runId: 'r3',
      messages: [],
      audit: [auditRecord({ callId: '4', runId: 'r3', at: 20 })],
    });
    const calls = (records: { callId: string }[]) => records.map((record) => record.callId);
    expect(calls(await store.listAudit())).toEqual(['4', '3', '2', '1']);
    expect(calls(await store.listAudit({ conversationId: 'c' }))).toEqual(['4', '2', '1']);
    expect(calls(await store.listAudit({ runId: 'r1' }))).toEqual(['2', '1']);
    expect(calls(await store.listAudit({ runId: 'r1', conversationId: 'd' }))).toEqual([]);
    expect(calls(await store.listAudit({ conversationId: 'c', limit: 2 }))).toEqual(['4', '2']);
  });
});

describe('change notifications', () => {
  it('posts every successful write on the airlock:<name> channel, one message each, and nothing for a failed one', async () => {
    const { store, name } = setUp();
    const channel = new BroadcastChannel(storeChannelName(name));
    const messages: (StoreChange | StoreChange[])[] = [];
    channel.onmessage = (event: MessageEvent<StoreChange | StoreChange[]>) =>
      messages.push(event.data);
    const changes = () => messages.flat();
    try {
      await store.ensureConversation('c');
      await store.commitStep({
        conversationId: 'c',
        runId: 'r',
        messages: [userSays('hi')],
        run: runRecord({ id: 'r' }),
      });
      await expect(store.renameConversation('missing', 'x')).rejects.toThrow();
      await store.saveMemory({ key: 'k', content: 'v' });
      await store.saveMemory({ key: 'k', content: 'v', scope: 'conversation:c' });
      await vi.waitFor(() => expect(messages).toHaveLength(4));
      // The step's changes went together; a lone change goes as itself.
      expect(messages[1]).toHaveLength(3);
      expect(changes()).toEqual([
        { table: 'conversations', conversationId: 'c' },
        { table: 'messages', conversationId: 'c' },
        { table: 'conversations', conversationId: 'c' },
        { table: 'runs', conversationId: 'c' },
        { table: 'memories' },
        { table: 'memories', conversationId: 'c' },
      ]);
    } finally {
      channel.close();
    }
  });
  it('tells onChange of its own writes at once, of another store’s as they arrive, and of what is no change as undefined', async () => {
    const { store, name, reopen } = setUp();
    const heard: (StoreChange | undefined)[] = [];
    onTestFinished(store.onChange((change) => heard.push(change)));
    await store.saveMemory({ key: 'k', content: 'v', scope: 'conversation:mine' });
    // At once: no turn of the event loop between the write and its listeners.
    expect(heard).toEqual([{ table: 'memories', conversationId: 'mine' }]);

    const other = reopen();
    await other.saveMemory({ key: 'k', content: 'v' });
    const forger = new BroadcastChannel(storeChannelName(name));
    onTestFinished(() => forger.close());
    for (const forged of [
      null,
      'messages',
      { table: 'nope' },
      { table: 'runs', conversationId: 7 },
      [],
      [{ table: 'runs' }, { table: 'runs', conversationId: 7 }],
    ])
      forger.postMessage(forged);
    forger.postMessage([{ table: 'audit' }, { table: 'messages', conversationId: 'last' }]);
    // A busy machine delivers late, never wrongly.
    await vi.waitFor(
      () => expect(heard.at(-1)).toEqual({ table: 'messages', conversationId: 'last' }),
      { timeout: 15_000 },
    );
    expect(heard).toContainEqual({ table: 'memories' });
    expect(heard.at(-2)).toEqual({ table: 'audit' });
    // Each forged message is one unknown change, a list with a bad item included.
    expect(heard.filter((change) => change === undefined)).toHaveLength(6);
  });

  it('lists the ids of stored conversations and of those with memories of their own, whatever their ids', async () => {
    const { store } = setUp();
    await store.ensureConversation('stored');
    for (const id of ['only-memories', 'a;b', '\uffffodd', 'stored'])
      await store.saveMemory({ key: 'k', content: 'v', scope: `conversation:${id}` });
    await store.saveMemory({ key: 'k', content: 'v', scope: 'user:conversation:nobody' });
    await store.saveMemory({ key: 'k', content: 'v' });
    expect((await store.conversationIds()).sort()).toEqual(
      ['stored', 'only-memories', 'a;b', '\uffffodd'].sort(),
    );
  });
});

describe('hostile memory rows', () => {
  it('deletes a stored memory whose scope is no string, and accepts a proposal to delete one, without failing after the write', async (context) => {
    const { store, indexedDB, name } = setUp();
    // Rows no Airlock writes: the in-memory store, run through this suite too, cannot hold them.
    if (indexedDB === undefined) return context.skip();
    await store.ensureConversation('c');
    const hostile = { id: 'm1', key: 'k', content: 'v', importance: 0.5, scope: 42 };
    // Written the way other same-origin code could, without Airlock.
    const raw = new Dexie(name, { indexedDB, IDBKeyRange });
    await raw.open();
    await raw.table('memories').bulkPut([hostile, { ...hostile, id: 'm2', key: 'k2' }]);
    raw.close();
    // The proposal shows the stored memory as it is (a delete applies only what it shows);
    // the store leaves shape checks to the caller's `check`, which here lets everything by.
    const memory = { ...hostile, id: 'm2', key: 'k2' } as unknown as MemoryRecord;
    await store.saveProposals([
      {
        id: 'p',
        conversationId: 'c',
        runId: 'r',
        createdAt: 1,
        change: 'delete',
        memory,
        reason: 'x',
      },
    ]);

    await store.deleteMemory('m1');
    expect(await store.acceptProposal('p', (row) => row as never)).toBeUndefined();

    expect(await store.listMemories({ includeExpired: true })).toEqual([]);
    expect(await store.listProposals()).toEqual([]);
  });
});

describe('closing', () => {
  it('rejects calls after close with storage-failed', async () => {
    const { store } = setUp();
    await store.ensureConversation('c');
    store.close();
    await expect(store.getConversation('c')).rejects.toMatchObject({
      code: 'storage-failed',
      message: expect.stringMatching(/closed/),
    });
  });
});
