import { type AgentEvent, isAirlockError } from 'airlock-agents';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentFor, collect, scriptModel } from './support';

const newDatabase = () => `test-${crypto.randomUUID()}`;

/** A long answer streamed slowly, so the test can act while it streams. */
const slowAnswer = {
  text: Array.from({ length: 80 }, (_, i) => `w${i}`).join(' '),
  chunkDelayMs: 20,
};

/** What a promise came to within `ms` (generous: a busy machine is slow, a hang is forever). */
async function settledWithin<T>(promise: Promise<T>, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const pending = new Promise<'still pending'>((resolve) => {
    timer = setTimeout(() => resolve('still pending'), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ resolved: value }),
        (error: unknown) => ({ rejected: error }),
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Opens `name` from the page at a raw IndexedDB version (default: the one it has), creating
 * nothing in an upgrade.
 */
function openRaw(name: string, version?: number): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = version === undefined ? indexedDB.open(name) : indexedDB.open(name, version);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    request.onblocked = () => {};
  });
}

/** Streams a run and deletes its conversation once `afterDeltas` text deltas arrived. */
async function deleteWhileStreaming(
  agent: ReturnType<typeof agentFor>,
  conversationId: string,
  afterDeltas: number,
) {
  const run = agent.run('Tell me everything');
  const events: AgentEvent[] = [];
  let deleting: Promise<void> | undefined;
  let deltas = 0;
  for await (const event of run) {
    events.push(event);
    if (event.type === 'text-delta' && ++deltas === afterDeltas) {
      deleting = agent.memory.deleteConversation(conversationId);
    }
  }
  await deleting;
  return { events, outcome: await run.result.catch((error: unknown) => error) };
}

describe('storage faults', () => {
  it('ends a run whose conversation is deleted mid-stream with conversation-deleted and keeps nothing of it', async () => {
    const database = newDatabase();
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([slowAnswer]);
    const agent = agentFor(session, { conversationId, memory: { database, tools: false } });

    const { events, outcome } = await deleteWhileStreaming(agent, conversationId, 20);

    expect(isAirlockError(outcome) && outcome.code).toBe('conversation-deleted');
    expect(events.at(-1)).toMatchObject({
      type: 'run-error',
      error: { code: 'conversation-deleted' },
    });
    expect(events.filter((event) => event.type === 'storage-error')).toEqual([]);
    expect(await agent.memory.getConversation(conversationId)).toBeUndefined();
    expect(await agent.memory.listRuns({ conversationId })).toEqual([]);
  });

  it('starts a new agent on a database whose conversation was deleted while its run streamed', async () => {
    const database = newDatabase();
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([slowAnswer, { text: 'Fresh start.' }]);
    const first = agentFor(session, { conversationId, memory: { database, tools: false } });
    await deleteWhileStreaming(first, conversationId, 10);
    first.dispose();

    const second = agentFor(session, { conversationId, memory: { database, tools: false } });

    expect(await settledWithin(second.ready, 10_000)).toMatchObject({
      resolved: expect.any(Array),
    });
    expect(await second.memory.listRuns({ statuses: ['running'] })).toEqual([]);
    expect((await second.run('Start over').result).text).toBe('Fresh start.');
  });

  it('skips a hostile running run row at start-up and still becomes ready', async () => {
    const database = newDatabase();
    const session = await scriptModel([{ text: 'Seeded.' }, { text: 'Still here.' }]);
    const seeding = agentFor(session, { memory: { database, tools: false } });
    await seeding.run('Seed the database').result;
    seeding.dispose();
    // Another version of the app (or any same-origin script) left rows this one cannot read.
    // At the database's own version, whatever it is: no upgrade runs.
    const raw = await openRaw(database);
    await new Promise<void>((resolve, reject) => {
      const transaction = raw.transaction('runs', 'readwrite');
      transaction.objectStore('runs').put({ id: 'hostile', status: 'running', conversationId: 42 });
      transaction.objectStore('runs').put({
        id: 'orphan',
        conversationId: 'gone',
        status: 'running',
        input: 'x',
        step: 1,
        partialText: 'half',
        startedAt: 1,
        updatedAt: 1,
      });
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error);
    });
    raw.close();

    const agent = agentFor(session, { memory: { database, tools: false } });

    expect(await settledWithin(agent.ready, 10_000)).toMatchObject({ resolved: expect.any(Array) });
    expect((await agent.run('Hello again').result).text).toBe('Still here.');
  });

  it('rejects ready and runs with storage-blocked when an old tab holds the database and ignores versionchange', async () => {
    const database = newDatabase();
    // An old tab: an open connection at version 1 that never closes when asked.
    const oldTab = await openRaw(database, 1);
    onTestFinished(() => oldTab.close());
    const session = await scriptModel([{ text: 'never sent' }]);
    const agent = agentFor(session, { memory: { database, tools: false, openTimeoutMs: 500 } });

    const ready = await settledWithin(agent.ready, 8_000);
    const run = await settledWithin(agent.run('Hello').result, 8_000);

    expect(ready).toMatchObject({ rejected: { code: 'storage-blocked' } });
    expect(run).toMatchObject({ rejected: { code: 'storage-blocked' } });
    expect(await session.requests()).toHaveLength(0);
  });

  it('closes its connection when a newer version opens the database, and later calls fail with schema-changed', async () => {
    const database = newDatabase();
    const session = await scriptModel([{ text: 'First.' }, { text: 'never sent' }]);
    const agent = agentFor(session, { memory: { database, tools: false } });
    await agent.run('Hello').result;

    // A newer tab upgrades the database; it is not blocked by this agent.
    const newer = await settledWithin(openRaw(database, 1_000), 8_000);
    expect(newer).not.toBe('still pending');
    if (typeof newer === 'object' && 'resolved' in newer) newer.resolved.close();

    const listed = await settledWithin(agent.memory.listConversations(), 8_000);
    const again = agent.run('Again');
    const events = await settledWithin(collect(again), 8_000);
    const run = await settledWithin(again.result, 8_000);

    expect(listed).toMatchObject({ rejected: { code: 'schema-changed' } });
    expect(run).toMatchObject({ rejected: { code: 'schema-changed' } });
    // The worker kept the conversation's rows: its request may have left before the input's
    // write failed, and was cancelled. Nothing of an answer reached the page.
    expect((await session.requests()).length).toBeLessThanOrEqual(2);
    expect(events).toMatchObject({ resolved: expect.any(Array) });
    if (typeof events === 'object' && 'resolved' in events)
      expect(events.resolved.filter((event) => event.type === 'text-delta')).toEqual([]);
  });

  it('runs on an in-memory store with a storage-unavailable warning when IndexedDB cannot be opened', async () => {
    const session = await scriptModel([{ text: 'Kept in memory.' }, { text: 'Remembered.' }]);
    const agent = agentFor(session, {
      worker: () =>
        new Worker(new URL('./fixtures/no-indexeddb-agent.worker.ts', import.meta.url), {
          type: 'module',
        }),
      memory: { tools: false },
    });

    const ready = await settledWithin(agent.ready, 8_000);
    const run = agent.run('Hello');
    const events = await collect(run);
    await agent.run('Again').result;

    expect(ready).toMatchObject({ resolved: expect.any(Array) });
    expect(await agent.storage).toEqual({ backend: 'memory' });
    expect(events.slice(0, 2)).toEqual([
      expect.objectContaining({ type: 'run-start' }),
      expect.objectContaining({ type: 'warning', code: 'storage-unavailable' }),
    ]);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'warning', code: 'storage-unavailable' }),
    );
    expect((await run.result).text).toBe('Kept in memory.');
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((record) => record.message.content)).toEqual([
      'Hello',
      'Kept in memory.',
      'Again',
      'Remembered.',
    ]);
  });

  it('tells a streaming run that a newer tab took the database with a schema-changed storage-error, and the run still ends', async () => {
    const database = newDatabase();
    const session = await scriptModel([slowAnswer]);
    const agent = agentFor(session, { memory: { database, tools: false } });
    const run = agent.run('Tell me everything');
    const events: AgentEvent[] = [];
    let deltas = 0;
    for await (const event of run) {
      events.push(event);
      if (event.type === 'text-delta' && ++deltas === 10) (await openRaw(database, 1_000)).close();
    }

    expect(events.filter((event) => event.type === 'storage-error')).toEqual([
      { type: 'storage-error', error: expect.objectContaining({ code: 'schema-changed' }) },
    ]);
    expect((await run.result).text).toBe(slowAnswer.text);
  });

  it.each([
    ['reports the answer the browser gives', () => Promise.resolve(true), { persisted: true }],
    // Firefox asks the user first; a prompt nobody answers must not hold the agent up.
    ['reports no answer when the browser never answers', () => new Promise<boolean>(() => {}), {}],
  ])(
    'asks for persistent storage once when memory.persist is set, and %s',
    async (_what, answer, expected) => {
      const session = await scriptModel([]);
      let asked = 0;
      // A stand-in for the browser's StorageManager (WebKitGTK has none), put back afterwards.
      const own = Object.getOwnPropertyDescriptor(navigator, 'storage');
      Object.defineProperty(navigator, 'storage', {
        configurable: true,
        value: {
          persist: () => {
            asked += 1;
            return answer();
          },
        },
      });
      onTestFinished(() => {
        if (own) Object.defineProperty(navigator, 'storage', own);
        else Reflect.deleteProperty(navigator, 'storage');
      });
      const agent = agentFor(session, { memory: { persist: true, tools: false } });

      const storage = await agent.storage;

      expect(asked).toBe(1);
      expect(storage).toEqual({ backend: 'indexeddb', ...expected });
    },
  );
});
