import { tool } from 'airlock-agents';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import {
  agentFor,
  collect,
  type ReceivedBody,
  receivedBodies,
  scriptModel,
  writeRawRow,
} from './support';

const newDatabase = () => `test-${crypto.randomUUID()}`;

/** The text of every message of a request body, in order. */
const contents = (body: { messages: { content: string | null }[] } | undefined) =>
  (body?.messages ?? []).map((message) => message.content ?? '');

/** The text deltas of a run's events, joined. */
const streamedText = (events: readonly { type: string; delta?: string }[]) =>
  events
    .filter((event) => event.type === 'text-delta')
    .map((event) => event.delta)
    .join('');

describe("a new conversation's first run, from what the agent worker keeps", () => {
  it('is sent again with the history when the conversation had messages no change notice told of', async () => {
    const database = newDatabase();
    const session = await scriptModel([
      { text: 'Probe.' },
      // The first request of the next run may reach the server before it is cancelled:
      // the answer is the same whichever turn answers the one that counts.
      { text: 'Second.' },
      { text: 'Second.' },
    ]);
    const agent = agentFor(session, { memory: { database, tools: false } });
    await agent.run('Probe', { conversationId: crypto.randomUUID() }).result;
    // Written straight into IndexedDB, as a writer that posts no change would: the agent
    // worker still takes this conversation for a new one.
    const conversationId = crypto.randomUUID();
    await writeRawRow(database, 'conversations', {
      id: conversationId,
      title: '',
      createdAt: 1,
      updatedAt: 1,
      summary: '',
      summarizedThroughSeq: 0,
      lastSeq: 1,
    });
    await writeRawRow(database, 'messages', {
      conversationId,
      seq: 1,
      runId: 'elsewhere',
      message: { role: 'user', content: 'Written elsewhere.' },
      status: 'complete',
      approxTokens: 4,
      at: 1,
    });

    const events = await collect(agent.run('Hi', { conversationId }));

    expect(events.at(-1)).toMatchObject({ type: 'run-finish', text: 'Second.' });
    // Nothing of a cancelled response reached the page.
    expect(streamedText(events)).toBe('Second.');
    const bodies = await receivedBodies(session);
    expect(contents(bodies.at(-1)).slice(-2)).toEqual(['Written elsewhere.', 'Hi']);
    // Any other request of the run is the one cancelled, built without the history.
    for (const body of bodies.slice(1, -1))
      expect(contents(body)).not.toContain('Written elsewhere.');
    const stored = await agent.memory.getConversation(conversationId);
    expect(stored?.messages.map((record) => record.message.content)).toEqual([
      'Written elsewhere.',
      'Hi',
      'Second.',
    ]);
  });

  it("carries a memory saved a moment before through the agent's memory API, whatever is forged on the store's channel", async () => {
    const database = newDatabase();
    const session = await scriptModel([{ text: 'One.' }, { text: 'Two.' }, { text: 'Three.' }]);
    const agent = agentFor(session, { memory: { database, tools: false } });
    await agent.run('One', { conversationId: crypto.randomUUID() }).result;
    const forger = new BroadcastChannel(`airlock:${database}`);
    onTestFinished(() => forger.close());
    for (const forged of [null, { table: 'memories', conversationId: 7 }, { table: 'runs' }])
      forger.postMessage(forged);

    await agent.memory.saveMemory({ key: 'city', content: 'Lyon' });
    await agent.run('Two', { conversationId: crypto.randomUUID() }).result;
    await agent.memory.saveMemory({ key: 'pet', content: 'cat' });
    await agent.run('Three', { conversationId: crypto.randomUUID() }).result;

    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(3);
    const memoriesOf = (index: number) =>
      contents(bodies[index]).find((content) => content.includes('kind="memories"')) ?? '';
    expect(memoriesOf(1)).toContain('city: Lyon');
    expect(memoriesOf(2)).toContain('city: Lyon');
    expect(memoriesOf(2)).toContain('pet: cat');
  });
});

describe("a conversation's follow-ups, from what the agent worker keeps", () => {
  const weather = tool({
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => ({ city, sky: 'clear' }),
  });

  /** A message as a test compares it: role, text (a tool result's as `tool`), tool ids. */
  const shape = (message: {
    role: string;
    content?: unknown;
    tool_calls?: readonly { id: string }[] | undefined;
    tool_call_id?: string | undefined;
  }) => ({
    role: message.role,
    content: message.role === 'tool' ? 'tool' : (message.content ?? ''),
    calls: message.tool_calls?.map((call) => call.id) ?? [],
    answers: message.tool_call_id ?? '',
  });
  /** A request's messages after the system message. */
  const sent = (body: ReceivedBody | undefined) =>
    (body?.messages ?? []).filter((message) => message.role !== 'system').map(shape);

  it('are sent with the whole stored history, tool calls and results included, run after run', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { text: 'Clear in Paris.' },
      { text: 'Two.' },
      { text: 'Three.' },
    ]);
    const agent = agentFor(session, { tools: [weather], memory: { tools: false } });
    const conversationId = crypto.randomUUID();
    for (const input of ['Weather in Paris?', 'Two', 'Three'])
      await agent.run(input, { conversationId }).result;

    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(4);
    const stored = ((await agent.memory.getConversation(conversationId))?.messages ?? []).map(
      (record) => shape(record.message),
    );
    expect(stored.map((message) => message.content)).toEqual([
      'Weather in Paris?',
      '',
      'tool',
      'Clear in Paris.',
      'Two',
      'Two.',
      'Three',
      'Three.',
    ]);
    expect(stored[1]?.calls).toEqual(['call_1']);
    expect(stored[2]?.answers).toBe('call_1');
    // Each follow-up carried every message stored before it, and its input.
    expect(sent(bodies[2])).toEqual(stored.slice(0, 5));
    expect(sent(bodies[3])).toEqual(stored.slice(0, 7));
  });

  /**
   * Two agents on one database, as two tabs: `here` has run the conversation twice ('One',
   * 'Two', answered 'One.' and 'Two.'), so it keeps its rows; `later` are the turns after.
   */
  async function keptHereAndElsewhere(later: readonly { text: string }[]) {
    const database = newDatabase();
    const session = await scriptModel([{ text: 'One.' }, { text: 'Two.' }, ...later]);
    const here = agentFor(session, { memory: { database, tools: false } });
    const elsewhere = agentFor(session, { memory: { database, tools: false } });
    const conversationId = crypto.randomUUID();
    await here.run('One', { conversationId }).result;
    await here.run('Two', { conversationId }).result;
    return { session, here, elsewhere, conversationId };
  }

  it("are sent again with another agent's turn in between, which the kept rows did not have", async () => {
    const { session, here, elsewhere, conversationId } = await keptHereAndElsewhere([
      { text: 'From elsewhere.' },
      // The first request of the next run may reach the server before it is cancelled:
      // the answer is the same whichever turn answers the one that counts.
      { text: 'Three.' },
      { text: 'Three.' },
    ]);
    await elsewhere.run('From another tab', { conversationId }).result;

    const events = await collect(here.run('Three', { conversationId }));

    expect(events.at(-1)).toMatchObject({ type: 'run-finish', text: 'Three.' });
    // Nothing of a cancelled response reached the page.
    expect(streamedText(events)).toBe('Three.');
    const stored = await here.memory.getConversation(conversationId);
    const history = stored?.messages.map((record) => record.message.content) ?? [];
    expect(history).toEqual([
      'One',
      'One.',
      'Two',
      'Two.',
      'From another tab',
      'From elsewhere.',
      'Three',
      'Three.',
    ]);
    // The request that counted carried the other turn; any other request of the run is the
    // one cancelled, built without it.
    const bodies = await receivedBodies(session);
    expect(contents(bodies.at(-1)).slice(-7)).toEqual(history.slice(0, -1));
    for (const body of bodies.slice(3, -1))
      expect(contents(body)).not.toContain('From another tab');
  });

  it('carry a memory of the conversation that another agent saved between two runs', async () => {
    const { session, here, elsewhere, conversationId } = await keptHereAndElsewhere([
      { text: 'Three.' },
      { text: 'Three.' },
    ]);
    await elsewhere.memory.saveMemory({
      key: 'city',
      content: 'Lyon',
      scope: `conversation:${conversationId}`,
    });

    await here.run('Three', { conversationId }).result;

    const bodies = await receivedBodies(session);
    const memories =
      contents(bodies.at(-1)).find((content) => content.includes('kind="memories"')) ?? '';
    expect(memories).toContain('city: Lyon');
    expect(contents(bodies.at(-1)).slice(-5)).toEqual(['One', 'One.', 'Two', 'Two.', 'Three']);
  });
});
