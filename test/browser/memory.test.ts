import { type AgentEvent, type StoreChange, tool } from 'airlock-agents';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, deleteNoteTool, receivedBodies, scriptModel } from './support';

const newDatabase = () => `test-${crypto.randomUUID()}`;

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, sky: 'clear' }),
});

describe('memory in IndexedDB', () => {
  it('tells memory.subscribe of another agent’s changes on the database, one by one, and drops forged messages of the wrong shape', async () => {
    const database = newDatabase();
    const session = await scriptModel([]);
    const agent = agentFor(session, { memory: { database, tools: false } });
    const other = agentFor(session, { memory: { database, tools: false } });
    const changes: StoreChange[] = [];
    onTestFinished(agent.memory.subscribe((change) => changes.push(change)));
    // Same-origin code on the store's channel; one sender's messages arrive in order.
    const forger = new BroadcastChannel(`airlock:${database}`);
    onTestFinished(() => forger.close());
    for (const forged of [
      42,
      null,
      'memories',
      { table: 7 },
      { table: 'runs', conversationId: {} },
      [{ table: 'runs', conversationId: 'half-forged' }, { table: 8 }],
    ])
      forger.postMessage(forged);
    // A write with several changes posts them as one list.
    forger.postMessage([
      { table: 'audit', conversationId: 'listed' },
      { table: 'runs', conversationId: 'last-forged' },
    ]);

    await other.memory.saveMemory({ key: 'city', content: 'Lyon' });

    // A generous wait: a busy machine delivers late, never wrongly.
    await expect
      .poll(() => changes.map((change) => change.conversationId ?? change.table), {
        timeout: 15_000,
      })
      .toEqual(expect.arrayContaining(['last-forged', 'memories']));
    expect(changes).toHaveLength(3);
    expect(changes).toEqual(
      expect.arrayContaining([
        { table: 'memories' },
        { table: 'audit', conversationId: 'listed' },
        { table: 'runs', conversationId: 'last-forged' },
      ]),
    );
  });

  it('replays earlier turns, tool calls and results included, to a new agent on the same conversation', async () => {
    const database = newDatabase();
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { text: 'Clear in Paris.' },
      { text: 'Still clear.' },
    ]);
    const first = agentFor(session, {
      tools: [weather],
      conversationId,
      memory: { database, tools: false },
    });
    await first.run('Weather in Paris?').result;
    first.dispose();

    const second = agentFor(session, {
      tools: [weather],
      conversationId,
      memory: { database, tools: false },
    });
    const result = await second.run('And now?').result;

    expect(result).toMatchObject({ text: 'Still clear.', conversationId });
    const replayed = (await receivedBodies(session))[2]?.messages.filter(
      (message) => message.role !== 'system',
    );
    expect(replayed?.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(replayed?.[0]?.content).toBe('Weather in Paris?');
    expect(replayed?.[1]?.tool_calls?.[0]).toMatchObject({
      id: 'call_1',
      function: { name: 'get_weather' },
    });
    expect(replayed?.[2]).toMatchObject({ tool_call_id: 'call_1' });
    expect(replayed?.[3]?.content).toBe('Clear in Paris.');
    expect(replayed?.[4]?.content).toBe('And now?');
    const stored = await second.memory.getConversation(conversationId);
    expect(stored?.messages.map((record) => [record.seq, record.message.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'tool'],
      [4, 'assistant'],
      [5, 'user'],
      [6, 'assistant'],
    ]);
  });

  it('has stored the input when run-start and the first text reach the page, though the model request goes out while it is written', async () => {
    const database = newDatabase();
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([{ text: 'one two three', chunkDelayMs: 5 }]);
    const agent = agentFor(session, { conversationId, memory: { database, tools: false } });
    const events: AgentEvent['type'][] = [];
    const storedAt: Record<string, string[]> = {};
    const run = agent.run('Remember this question.');
    for await (const event of run) {
      events.push(event.type);
      if ((event.type === 'run-start' || event.type === 'text-delta') && !storedAt[event.type]) {
        const stored = await agent.memory.getConversation(conversationId);
        storedAt[event.type] = (stored?.messages ?? []).map((record) =>
          typeof record.message.content === 'string' ? record.message.content : '',
        );
      }
    }
    agent.dispose();

    expect(events.slice(0, 2)).toEqual(['run-start', 'step-start']);
    expect(events.at(-1)).toBe('run-finish');
    expect(storedAt['run-start']).toEqual(['Remember this question.']);
    expect(storedAt['text-delta']?.[0]).toBe('Remember this question.');
    expect((await receivedBodies(session))[0]?.messages.at(-1)?.content).toBe(
      'Remember this question.',
    );
  });

  it('keeps each of many runs started together in its own conversation, every step stored', async () => {
    const database = newDatabase();
    const count = 12;
    // Streamed slowly enough that the runs' input, progress and answer writes overlap.
    const session = await scriptModel(
      Array.from({ length: count }, () => ({ text: 'Done with it.', chunkDelayMs: 5 })),
    );
    const agent = agentFor(session, { memory: { database, tools: false } });
    onTestFinished(() => agent.dispose());
    const ids = Array.from({ length: count }, () => crypto.randomUUID());
    const results = await Promise.all(
      ids.map(
        (conversationId, index) => agent.run(`Question ${index}.`, { conversationId }).result,
      ),
    );

    expect(results.map((result) => result.reason)).toEqual(ids.map(() => 'stop'));
    for (const [index, conversationId] of ids.entries()) {
      const stored = await agent.memory.getConversation(conversationId);
      expect(
        stored?.messages.map((record) => [record.seq, record.message.role, record.message.content]),
      ).toEqual([
        [1, 'user', `Question ${index}.`],
        [2, 'assistant', 'Done with it.'],
      ]);
      expect(stored?.conversation.lastSeq).toBe(2);
      const runs = await agent.memory.listRuns({ conversationId });
      expect(runs.map((run) => [run.status, run.partialText])).toEqual([['finished', '']]);
    }
  });

  it('summarises messages that fall out of the window with the model, sends and stores the summary', async () => {
    const session = await scriptModel([
      { text: 'Answer one.' },
      { text: 'Answer two.' },
      { text: 'The user asked two questions about cats.' }, // the summary request
      { text: 'Answer three.' },
    ]);
    const agent = agentFor(session, { memory: { window: { maxMessages: 4 }, tools: false } });
    await agent.run('Question one about cats').result;
    await agent.run('Question two about cats').result;
    await agent.run('Question three').result;

    const requests = await session.requests();
    const summaryRequest = requests[2]?.body as {
      stream?: boolean;
      messages: Array<{ content: string }>;
    };
    expect(summaryRequest.stream).not.toBe(true);
    expect(summaryRequest.messages.at(-1)?.content).toContain('user: Question one about cats');
    const third = requests[3]?.body as { messages: Array<{ role: string; content: string }> };
    // The summary is data: a user-role message, never system text.
    expect(third.messages[0]?.role).toBe('system');
    expect(third.messages[1]).toEqual({
      role: 'user',
      content:
        '<airlock_data kind="summary">\nThe user asked two questions about cats.\n</airlock_data>',
    });
    expect(third.messages.slice(2).map((message) => message.content)).toEqual([
      'Answer one.',
      'Question two about cats',
      'Answer two.',
      'Question three',
    ]);
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.conversation).toMatchObject({
      summary: 'The user asked two questions about cats.',
      summarizedThroughSeq: 1,
    });
  });

  it('puts a memory saved with the memory tool into the memories data message of a new conversation', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { name: 'save_memory', arguments: { key: 'user.name', content: 'Ada', importance: 0.9 } },
        ],
      },
      { text: 'Nice to meet you, Ada.' },
      { text: 'Hello again, Ada.' },
    ]);
    const agent = agentFor(session);
    await agent.run('My name is Ada.').result;

    await agent.run('Hi!', { conversationId: crypto.randomUUID() }).result;

    const fresh = (await receivedBodies(session))[2];
    expect(fresh?.messages[0]?.content).not.toContain('Ada');
    expect(
      fresh?.messages
        .filter((message) => message.role === 'user')
        .map((message) => message.content),
    ).toEqual(['<airlock_data kind="memories">\n- user.name: Ada\n</airlock_data>', 'Hi!']);
    expect(await agent.memory.listMemories()).toEqual([
      expect.objectContaining({
        key: 'user.name',
        content: 'Ada',
        importance: 0.9,
        scope: 'global',
      }),
    ]);
  });

  it('leaves an expired memory out of the context and prunes it when an agent opens', async () => {
    const database = newDatabase();
    const session = await scriptModel([{ text: 'ok' }]);
    const writer = agentFor(session, { memory: { database } });
    await writer.memory.saveMemory({
      key: 'coupon',
      content: 'SAVE10',
      expiresAt: Date.now() + 300,
    });
    await writer.memory.saveMemory({ key: 'city', content: 'Lyon' });
    writer.dispose();
    await new Promise((resolve) => setTimeout(resolve, 400));

    const reader = agentFor(session, { memory: { database } });
    await reader.run('Hello').result;

    const memories = (await receivedBodies(session))[0]?.messages[1]?.content ?? '';
    expect(memories).toContain('- city: Lyon');
    expect(memories).not.toContain('SAVE10');
    const all = await reader.memory.listMemories({ includeExpired: true });
    expect(all.map((memory) => memory.key)).toEqual(['city']);
  });

  it('marks a run cut off by a closed tab as interrupted, keeping its partial text out of the next request', async () => {
    const database = newDatabase();
    const conversationId = crypto.randomUUID();
    // 8 s of stream at 20 ms a delta: the tab closes long before it ends.
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
    const session = await scriptModel([
      { text: words, chunkDelayMs: 20 },
      { text: 'Fresh start.' },
    ]);
    const closing = agentFor(session, { conversationId, memory: { database, tools: false } });
    const reading = collect(closing.run('Tell me everything'));
    // The tab closes once the streamed text was saved past its first words (the journal saves
    // a second after a delta), however late the deltas came on a busy machine.
    const savedText = async () =>
      (await closing.memory.listRuns({ conversationId }))[0]?.partialText ?? '';
    await expect.poll(savedText, { timeout: 15_000 }).toMatch(/^w0 w1 w2/);
    closing.dispose();
    expect((await reading).at(-1)).toMatchObject({
      type: 'run-error',
      error: { code: 'agent-disposed' },
    });

    const reopened = agentFor(session, { conversationId, memory: { database, tools: false } });
    await reopened.ready;
    const stored = await reopened.memory.getConversation(conversationId);
    const last = stored?.messages.at(-1);
    expect(last?.status).toBe('interrupted');
    expect(String(last?.message.content)).toMatch(/^w0 w1 w2/);
    const [run] = await reopened.memory.listRuns({ conversationId });
    expect(run?.status).toBe('interrupted');

    await reopened.run('Start over').result;
    const next = (await receivedBodies(session))[1];
    expect(next?.messages.map((message) => message.content)).toEqual([
      'Tell me everything',
      'Start over',
    ]);
  });

  it('lets exactly one of two agents run a conversation; the other gets conversation-busy', async () => {
    const database = newDatabase();
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      { text: 'slow answer '.repeat(20), chunkDelayMs: 10 },
      { text: 'never' },
    ]);
    const one = agentFor(session, { conversationId, memory: { database, tools: false } });
    const two = agentFor(session, { conversationId, memory: { database, tools: false } });
    await Promise.all([one.ready, two.ready]);

    let streaming: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      streaming = resolve;
    });
    const first = one.run('First');
    const reading = (async () => {
      for await (const event of first) if (event.type === 'text-delta') streaming();
    })();
    await started;
    const second = await two.run('Second').result.catch((error: unknown) => error);
    await reading;
    expect((await first.result).reason).toBe('stop');

    expect(second).toMatchObject({ code: 'conversation-busy' });
    expect(await session.requests()).toHaveLength(1);
    const stored = await two.memory.getConversation(conversationId);
    expect(stored?.messages.map((record) => record.message.content)).toEqual([
      'First',
      expect.stringMatching(/^slow/),
    ]);
  });

  it('answers a pending approval after the tab that asked was closed, and the run finishes', async () => {
    const database = newDatabase();
    const conversationId = crypto.randomUUID();
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Deleted n1.' },
    ]);
    const asking = agentFor(session, {
      tools: [deleteNote],
      conversationId,
      memory: { database, tools: false },
    });
    // The tab goes away while the call waits: the run's page side ends, its record stays.
    // (Breaking out of the loop first would cancel the run, and a cancelled run is ended.)
    for await (const event of asking.run('Delete n1'))
      if (event.type === 'approval-request') asking.dispose();

    const later = agentFor(session, {
      tools: [deleteNote],
      conversationId,
      memory: { database, tools: false },
    });
    const [waiting] = await later.memory.listRuns({ statuses: ['awaiting-approval'] });
    expect(waiting?.pendingStep?.awaiting).toEqual([
      expect.objectContaining({ callId: 'call_del', toolName: 'delete_note' }),
    ]);
    const resumed = later.resume(waiting!.id);
    const events: AgentEvent[] = [];
    for await (const event of resumed) {
      events.push(event);
      if (event.type === 'approval-request') await resumed.approve(event.approvalId);
    }

    expect(counter.runs).toBe(1);
    expect(events.at(-1)).toMatchObject({
      type: 'run-finish',
      reason: 'stop',
      text: 'Deleted n1.',
    });
    const stored = await later.memory.getConversation(conversationId);
    expect(stored?.messages.map((record) => record.message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect((await later.memory.listRuns({ conversationId }))[0]?.status).toBe('finished');
    // The resumed run has no new input: its own stored input still reaches the model.
    const answered = (await receivedBodies(session)).at(-1);
    expect(answered?.messages.slice(1).map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
    ]);
    expect(answered?.messages[1]?.content).toBe('Delete n1');
  });

  it('exports a conversation and imports it elsewhere; bad imports change nothing', async () => {
    const session = await scriptModel([{ text: 'Exported answer.' }]);
    const source = agentFor(session);
    await source.run('Export me').result;
    const json = await source.memory.exportConversation(source.conversationId);

    const target = agentFor(session);
    const imported = await target.memory.importConversation(json);
    expect(imported.id).toBe(source.conversationId);
    const copy = await target.memory.getConversation(source.conversationId);
    expect(copy?.messages.map((record) => record.message.content)).toEqual([
      'Export me',
      'Exported answer.',
    ]);

    const before = await target.memory.listConversations();
    await expect(target.memory.importConversation('{ not json')).rejects.toMatchObject({
      code: 'invalid-input',
    });
    await expect(
      target.memory.importConversation(
        JSON.stringify({ format: 'airlock.conversation', version: 1, conversation: 42 }),
      ),
    ).rejects.toMatchObject({ code: 'invalid-input' });
    await expect(target.memory.importConversation(json)).rejects.toMatchObject({
      code: 'invalid-input',
    });
    expect(await target.memory.listConversations()).toEqual(before);
  });

  it('reports a full disk as a storage-error event and still returns the run result', async () => {
    const session = await scriptModel([{ text: 'Answer despite a full disk.' }]);
    const agent = agentFor(session, {
      worker: () =>
        new Worker(new URL('./fixtures/full-storage-agent.worker.ts', import.meta.url), {
          type: 'module',
        }),
    });
    const run = agent.run('Hello');

    const events = await collect(run);

    expect(events.filter((event) => event.type === 'storage-error')).toEqual([
      { type: 'storage-error', error: expect.objectContaining({ code: 'storage-full' }) },
    ]);
    expect((await run.result).text).toBe('Answer despite a full disk.');
  });
});
