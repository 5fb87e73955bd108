import { type AgentEvent, type FlowPolicy, type RunInput, tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFor, readRawRow, scriptModel } from './support';

// Issue #50: an approval names the memory or knowledge chunk in play (its id), not only the
// kind; an attachment carries its own confidentiality level into the run's label; a forged
// attachment label is refused before anything is stored.

const POLICY: FlowPolicy = { untrustedToSink: 'approve' };

function emailTool(sent: unknown[]) {
  return tool({
    name: 'send_email',
    description: 'Sends an email.',
    parameters: z.object({ to: z.string() }),
    sink: ({ to }) => `email:${to}`,
    execute: (args) => {
      sent.push(args);
      return 'sent';
    },
  });
}

const emailTurns = [
  { toolCalls: [{ id: 'call_send', name: 'send_email', arguments: { to: 'a@b.example' } }] },
  { text: 'Done.' },
];

async function eventsOf(run: AsyncIterable<AgentEvent> & { reject: (id: string) => unknown }) {
  const events: AgentEvent[] = [];
  for await (const event of run) {
    events.push(event);
    if (event.type === 'approval-request') await run.reject(event.approvalId);
  }
  return events;
}

const asked = (events: readonly AgentEvent[]) =>
  events.flatMap((event) => (event.type === 'approval-request' ? [event] : []));

describe('flow sources and attachment labels', () => {
  it('names each memory in the context by its id and key in the approval request', async () => {
    const session = await scriptModel(emailTurns);
    const sent: unknown[] = [];
    const agent = agentFor(session, {
      tools: [emailTool(sent)],
      memory: { tools: false },
      flow: POLICY,
    });
    await agent.ready;
    const first = await agent.memory.saveMemory({ key: 'mail', content: 'Send mail to a@b.' });
    const second = await agent.memory.saveMemory({ key: 'tone', content: 'Be brief.' });
    const events = await eventsOf(agent.run('Do what my notes say.'));
    const [request] = asked(events);
    expect(request?.flow?.sources).toEqual(
      expect.arrayContaining([
        { kind: 'memory', name: 'mail', id: first.id },
        { kind: 'memory', name: 'tone', id: second.id },
      ]),
    );
    expect(sent).toEqual([]);
  });

  it('names each knowledge chunk in the context by document and chunk', async () => {
    const session = await scriptModel(emailTurns);
    const agent = agentFor(session, {
      tools: [emailTool([])],
      memory: { tools: false },
      knowledge: { minScore: -1 },
      flow: POLICY,
    });
    await agent.ready;
    await agent.knowledge.add({ id: 'handbook', title: 'Handbook', text: 'Mail a@b.example.' });
    const events = await eventsOf(agent.run('What does the handbook say about mail?'));
    expect(asked(events)[0]?.flow?.sources).toContainEqual({
      kind: 'knowledge',
      name: 'Handbook',
      id: 'handbook#0',
    });
  });

  it('joins an attachment’s own level into the run’s label: a sink the level may not reach is refused', async () => {
    const session = await scriptModel(emailTurns);
    const sent: unknown[] = [];
    const database = `flow-${crypto.randomUUID()}`;
    const agent = agentFor(session, {
      tools: [emailTool(sent)],
      memory: { database, tools: false },
      flow: { ...POLICY, allowedDestinations: { private: ['email:a@b.example'] } },
    });
    const input: RunInput = [
      { type: 'text', text: 'Send my lab results on.' },
      {
        type: 'file',
        data: new File(['Cholesterol 5.2'], 'labs.txt', { type: 'text/plain' }),
        label: { confidentiality: 'health' },
      },
    ];
    const run = agent.run(input);
    const events = await eventsOf(run);
    await run.result;
    // `health` is named nowhere in allowedDestinations: refused, not asked.
    expect(asked(events)).toEqual([]);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'tool-result',
        callId: 'call_send',
        ok: false,
        error: expect.objectContaining({ code: 'flow-refused' }),
        flow: expect.objectContaining({
          rule: 'destination-refused',
          confidentiality: ['health'],
          integrity: 'untrusted',
        }),
      }),
    );
    expect(sent).toEqual([]);
    const row = (await readRawRow(database, 'runs', run.runId)) as { flow?: unknown };
    expect(row.flow).toMatchObject({ confidentiality: ['health'], integrity: 'untrusted' });
  });

  it.each<[string, unknown]>([
    ['a level that is not a string', { confidentiality: 7 }],
    ['a blank level', { confidentiality: '  ' }],
    ['a huge level', { confidentiality: 'x'.repeat(100_000) }],
    ['a label that is a string', 'private'],
    ['an integrity it may not claim', { integrity: 'trusted' }],
    ['an unknown field', { confidentiality: 'private', trust: 'full' }],
  ])(
    'refuses an attachment label that is %s with invalid-input, storing nothing',
    async (_, label) => {
      const session = await scriptModel([{ text: 'Never sent.' }]);
      const database = `flow-${crypto.randomUUID()}`;
      const agent = agentFor(session, { memory: { database, tools: false }, flow: POLICY });
      const input = [
        { type: 'text', text: 'Look at this.' },
        { type: 'image', image: 'https://example.com/cat.png', label },
      ] as unknown as RunInput;
      const run = agent.run(input);
      const error = await run.result.catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({
        code: 'invalid-input',
        // A type error inside the input union is named at `input`; the others at the label itself.
        details: { field: expect.stringMatching(/^input/) },
      });
      expect(await session.requests()).toEqual([]);
      expect(await agent.memory.listConversations()).toEqual([]);
    },
  );

  it('treats an app-defined level nothing allows as reaching no sink, even with approval asked', async () => {
    const session = await scriptModel(emailTurns);
    const sent: unknown[] = [];
    const agent = agentFor(session, {
      tools: [emailTool(sent)],
      memory: { tools: false },
      flow: POLICY,
    });
    const run = agent.run([
      { type: 'text', text: 'Forward this.' },
      {
        type: 'image',
        image: 'https://example.com/x.png',
        label: { confidentiality: 'level-no-policy-names' },
      },
    ]);
    const events = await eventsOf(run);
    expect(asked(events)).toEqual([]);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'tool-result',
        flow: expect.objectContaining({ rule: 'destination-refused' }),
      }),
    );
    expect(sent).toEqual([]);
  });
});
