import { tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentFor,
  collect,
  deleteNoteTool,
  errorOf,
  pngOf,
  readRawRow,
  receivedBodies,
  scriptModel,
  throughDefaultProxy,
  writeRawRow,
} from './support';

// An input the model endpoint refuses (HTTP 400 or 413 before any output) ends its run with
// `input-refused` and is kept as refused: listed, never sent again, so the conversation goes
// on. And the agent's default limits and the default proxy's agree: an input the agent
// accepts by default is never refused by the default proxy for its size.

const MiB = 1024 * 1024;

/** The user texts each request the model server received carried. */
async function userTexts(session: Awaited<ReturnType<typeof scriptModel>>): Promise<string[][]> {
  return (await receivedBodies(session)).map((body) =>
    body.messages
      .filter((message) => message.role === 'user')
      .map((message) =>
        typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
      ),
  );
}

const lookup = tool({
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: found`,
});

describe('a refused input', () => {
  it('is kept as refused and never sent again when the default proxy refuses it for its size', async () => {
    const session = await scriptModel([{ text: 'Hello again.' }]);
    const agent = agentFor(session, {
      model: { baseURL: throughDefaultProxy(session), model: 'gpt-4o-mini' },
      // Raised past the defaults, which the default proxy lets through.
      limits: { maxAttachmentBytes: 16 * MiB, maxInputBytes: 16 * MiB },
    });

    const refused = await collect(
      agent.run([
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', image: pngOf(6 * MiB) },
      ]),
    );
    expect(errorOf(refused)).toMatchObject({
      code: 'input-refused',
      // Airlock's proxy marks its refusal: its size limit, typed, is what refused the turn.
      details: { status: 400, refusedBy: 'limit-exceeded', proxyCode: 'limit_exceeded', seqs: [1] },
    });

    const next = await agent.run('Just say hello.').result;
    expect(next.text).toBe('Hello again.');
    // The model server saw only the second request, which carries nothing of the first input.
    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]?.messages.filter((message) => message.role === 'user')).toEqual([
      { role: 'user', content: 'Just say hello.' },
    ]);

    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((row) => [row.seq, row.message.role, row.status])).toEqual([
      [1, 'user', 'refused'],
      [2, 'user', 'complete'],
      [3, 'assistant', 'complete'],
    ]);
  });

  it('is kept as refused when the default proxy refuses its body as too large (413)', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      model: { baseURL: throughDefaultProxy(session), model: 'gpt-4o-mini' },
      limits: { maxAttachmentBytes: 16 * MiB, maxInputBytes: 16 * MiB },
    });
    const events = await collect(agent.run([{ type: 'image', image: pngOf(12 * MiB) }]));
    expect(errorOf(events)).toMatchObject({ code: 'input-refused', details: { status: 413 } });
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((row) => row.status)).toEqual(['refused']);
  });
});

describe('the default limits', () => {
  it("let the issue's 1 MiB image through the default proxy", async () => {
    const session = await scriptModel([{ text: 'A black square.' }]);
    const agent = agentFor(session, {
      model: { baseURL: throughDefaultProxy(session), model: 'gpt-4o-mini' },
    });
    const result = await agent.run([
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image', image: pngOf(MiB) },
    ]).result;
    expect(result.text).toBe('A black square.');
  });

  it('let the largest input the agent accepts through the default proxy, and refuse one byte or character more in the agent', async () => {
    const session = await scriptModel([{ text: 'Received.' }]);
    const agent = agentFor(session, {
      model: { baseURL: throughDefaultProxy(session), model: 'gpt-4o-mini' },
      // The default window (8 000 tokens) refuses such a text before its size limit does; a
      // window is no size limit of the request's, so it is widened here and the limits kept.
      memory: { window: { maxMessages: 40, maxTokens: 1_000_000 } },
    });
    // Every character one JSON escapes to six (`\u0001`): the longest text in a request.
    const text = '\u0001'.repeat(100_000);
    const result = await agent.run([
      { type: 'text', text },
      { type: 'image', image: pngOf(4 * MiB) },
    ]).result;
    expect(result.text).toBe('Received.');
    const [body] = await receivedBodies(session);
    expect(JSON.stringify(body?.messages.at(-1)).length).toBeGreaterThan(6_000_000);

    const overBytes = await agent
      .run([
        { type: 'text', text: 'one byte more' },
        { type: 'image', image: pngOf(4 * MiB + 1) },
      ])
      .result.catch((error: unknown) => error);
    expect(overBytes).toMatchObject({
      code: 'attachment-too-large',
      details: { limit: 4 * MiB, size: 4 * MiB + 1 },
    });
    const overChars = await agent
      .run([
        { type: 'text', text: `${text}x` },
        { type: 'image', image: pngOf(4 * MiB) },
      ])
      .result.catch((error: unknown) => error);
    expect(overChars).toMatchObject({
      code: 'input-too-large',
      details: { limit: 100_000, unit: 'chars' },
    });
    // Neither was sent.
    expect(await receivedBodies(session)).toHaveLength(1);
  });
});

describe('a refused turn, under hostile conditions', () => {
  it("marks the whole turn when the endpoint refuses a request after the turn's tool calls", async () => {
    const session = await scriptModel(
      [
        { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { word: 'big' } }] },
        { status: 400, message: "This model's maximum context length was exceeded." },
        { text: 'Fresh start.' },
      ],
      {},
    );
    const agent = agentFor(session, { tools: [lookup], model: { maxRetries: 0 } });
    const events = await collect(agent.run('Look up big'));
    expect(events.filter((event) => event.type === 'tool-result')).toHaveLength(1);
    expect(errorOf(events)).toMatchObject({
      code: 'input-refused',
      details: { status: 400, seqs: [1, 2, 3] },
    });

    expect((await agent.run('Hello').result).text).toBe('Fresh start.');
    const bodies = await receivedBodies(session);
    // The third request carries nothing of the refused turn: no input, no call, no result.
    expect(bodies[2]?.messages.filter((message) => message.role !== 'system')).toEqual([
      { role: 'user', content: 'Hello' },
    ]);
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((row) => [row.message.role, row.status])).toEqual([
      ['user', 'refused'],
      ['assistant', 'refused'],
      ['tool', 'refused'],
      ['user', 'complete'],
      ['assistant', 'complete'],
    ]);
    // The call it made stays in the audit log: it did run.
    expect(await agent.memory.toolCalls({ conversationId: agent.conversationId })).toHaveLength(1);
  });

  it.each([401, 403, 429, 500])(
    'marks nothing when the endpoint answers %i, which says nothing of the input',
    async (status) => {
      const session = await scriptModel([{ status }, { text: 'Back.' }]);
      const agent = agentFor(session, { model: { maxRetries: 0 } });
      const events = await collect(agent.run('Remember me'));
      expect(errorOf(events)?.code).not.toBe('input-refused');
      const stored = await agent.memory.getConversation(agent.conversationId);
      expect(stored?.messages.map((row) => row.status)).toEqual(['complete']);
      // The input is sent again with the next run, as before.
      await agent.run('Again').result;
      expect((await userTexts(session)).at(-1)).toEqual(['Remember me', 'Again']);
    },
  );

  it('leaves a forged message row of an unknown status out of reads and of every request', async () => {
    const session = await scriptModel([{ text: 'One.' }, { text: 'Two.' }]);
    const database = `test-${crypto.randomUUID()}`;
    const agent = agentFor(session, { memory: { database } });
    await agent.run('First').result;
    const conversationId = agent.conversationId;
    const row = await readRawRow(database, 'messages', [conversationId, 1]);
    // Same-origin code writes a copy of the input with a status no version knows.
    for (const status of ['REFUSED', 7, null]) {
      await writeRawRow(database, 'messages', {
        ...(row as object),
        seq: 100,
        status,
        message: { role: 'user', content: `forged ${String(status)}` },
      });
      const listed = await agent.memory.getConversation(conversationId);
      expect(listed?.messages.map((message) => message.seq)).toEqual([1, 2]);
    }
    await agent.run('Second').result;
    const texts = (await userTexts(session)).at(-1) ?? [];
    expect(texts.some((text) => text.includes('forged'))).toBe(false);
  });

  it('keeps a refused turn out of the runs of another tab that kept the conversation', async () => {
    const session = await scriptModel([
      { text: 'Hi from B.' },
      { status: 413, message: 'Request entity too large.' },
      // B's first request is built from the context its worker kept, found out of date by
      // its input's write and replaced; the server may or may not have answered it first.
      { text: 'B again.' },
      { text: 'B again.' },
    ]);
    const place = { database: `test-${crypto.randomUUID()}`, conversationId: crypto.randomUUID() };
    const tabA = agentFor(session, {
      conversationId: place.conversationId,
      memory: { database: place.database },
      model: { maxRetries: 0 },
    });
    const tabB = agentFor(session, {
      conversationId: place.conversationId,
      memory: { database: place.database },
    });
    // B runs first, so its worker keeps the conversation's context.
    await tabB.run('Hello from B').result;
    const refused = await collect(tabA.run('A huge paste'));
    expect(errorOf(refused)).toMatchObject({ code: 'input-refused', details: { status: 413 } });
    expect((await tabB.run('And again').result).text).toBe('B again.');
    const texts = await userTexts(session);
    expect(texts[1]).toEqual(['Hello from B', 'A huge paste']);
    // No request after the refusal carries the refused input; the one B's run used has the rest.
    for (const sent of texts.slice(2)) expect(sent).not.toContain('A huge paste');
    expect(texts.at(-1)).toEqual(['Hello from B', 'And again']);
    const stored = await tabB.memory.getConversation(place.conversationId);
    expect(stored?.messages.map((row) => row.status)).toEqual([
      'complete',
      'complete',
      'refused',
      'complete',
      'complete',
    ]);
  });

  it('resumes a run of a conversation that holds a refused turn without sending it', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { status: 400, message: 'Too large.' },
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Deleted n1.' },
    ]);
    const place = { database: `test-${crypto.randomUUID()}`, conversationId: crypto.randomUUID() };
    const asking = agentFor(session, {
      tools: [deleteNote],
      conversationId: place.conversationId,
      memory: { database: place.database, tools: false },
      model: { maxRetries: 0 },
    });
    expect(errorOf(await collect(asking.run('Refused paste')))?.code).toBe('input-refused');
    for await (const event of asking.run('Delete n1'))
      if (event.type === 'approval-request') asking.dispose();

    const later = agentFor(session, {
      tools: [deleteNote],
      conversationId: place.conversationId,
      memory: { database: place.database, tools: false },
    });
    const [waiting] = await later.memory.listRuns({ statuses: ['awaiting-approval'] });
    const resumed = later.resume(waiting!.id);
    for await (const event of resumed)
      if (event.type === 'approval-request') await resumed.approve(event.approvalId);
    expect((await resumed.result).text).toBe('Deleted n1.');
    expect(counter.runs).toBe(1);
    const texts = await userTexts(session);
    expect(texts.slice(1)).toEqual([['Delete n1'], ['Delete n1']]);
    const stored = await later.memory.getConversation(place.conversationId);
    expect(stored?.messages.map((row) => [row.message.role, row.status])).toEqual([
      ['user', 'refused'],
      ['user', 'complete'],
      ['assistant', 'complete'],
      ['tool', 'complete'],
      ['assistant', 'complete'],
    ]);
  });
});
