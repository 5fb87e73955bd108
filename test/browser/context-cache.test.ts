import { describe, expect, it, onTestFinished } from 'vitest';
import { agentFor, collect, receivedBodies, scriptModel, writeRawRow } from './support';

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
