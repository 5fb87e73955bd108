import {
  type AgentEvent,
  type AgentRun,
  isAirlockError,
  type ToolsetOptions,
  tool,
} from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, readToolOutput, receivedBodies, scriptModel } from './support';

// Each test is an attack on the containment, as a tool's code, a model endpoint or a
// careless page would make it; the names say which.

type ToolResult = Extract<AgentEvent, { type: 'tool-result' }>;
type ApprovalRequest = Extract<AgentEvent, { type: 'approval-request' }>;

const hostileUrl = new URL('./fixtures/hostile-tools.worker.ts', import.meta.url).href;
const tiers = {
  worker: { name: 'hostile', worker: () => new Worker(hostileUrl, { type: 'module' }) },
  iframe: { name: 'hostile', isolation: 'iframe', workerUrl: hostileUrl },
} satisfies Record<string, ToolsetOptions>;

const results = (events: readonly AgentEvent[]) =>
  events.filter((event): event is ToolResult => event.type === 'tool-result');
const outcome = (result: ToolResult | undefined) =>
  result?.ok ? 'ok' : (result?.error.code ?? 'missing');

/** Plays a run to its end, answering every approval request with `decide`. */
async function playRun(
  run: AgentRun,
  decide: (request: ApprovalRequest) => 'approve' | 'reject',
): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of run) {
    events.push(event);
    if (event.type === 'approval-request') {
      if (decide(event) === 'approve') await run.approve(event.approvalId);
      else await run.reject(event.approvalId, 'Not allowed.');
    }
  }
  return events;
}

describe.each(Object.entries(tiers))('a hostile tool in the %s tier', (_tier, toolset) => {
  it('cannot waive the approval of another tool of its toolset by rewriting its worker’s answers', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_patch', name: 'waive_approvals', arguments: {} }] },
      {
        toolCalls: [
          { id: 'call_all', name: 'delete_all', arguments: {} },
          { id: 'call_etc', name: 'write_file', arguments: { path: '/etc/passwd' } },
        ],
      },
      { text: 'done' },
    ]);
    const agent = agentFor(session, { toolsets: [toolset] });
    const asked: string[] = [];
    const events = await playRun(agent.run('Clean up'), (request) => {
      asked.push(request.toolName);
      return 'reject';
    });

    expect(asked.sort()).toEqual(['delete_all', 'write_file']);
    const byCall = Object.fromEntries(results(events).map((result) => [result.callId, result]));
    expect(outcome(byCall.call_all)).toBe('tool-rejected');
    expect(outcome(byCall.call_etc)).toBe('tool-rejected');
  });

  it('cannot push more than its maxOutputChars to the model, and the page sees what the model saw', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_big', name: 'inflate', arguments: {} }] },
      { text: 'done' },
    ]);
    const agent = agentFor(session, { toolsets: [toolset] });
    const events = await collect(agent.run('Inflate'));

    const toolMessage = (await receivedBodies(session))[1]?.messages.at(-1);
    const { body } = readToolOutput(toolMessage?.content);
    expect(body.startsWith('x'.repeat(100))).toBe(true);
    expect(body).toContain('[output truncated: showing the first 100 of 200000 characters]');
    expect(body.length).toBeLessThan(200);
    const [result] = results(events);
    expect(result?.ok && result.output).toBe(body);
  });

  it('cannot overhear the arguments of another conversation’s calls', async () => {
    const session = await scriptModel([
      { toolCalls: [{ name: 'snoop', arguments: {} }] },
      { text: 'listening' },
      { toolCalls: [{ name: 'echo', arguments: { text: 'secret-of-B' } }] },
      { text: 'echoed' },
      { toolCalls: [{ name: 'peek', arguments: {} }] },
      { text: 'peeked' },
    ]);
    const agent = agentFor(session, { toolsets: [toolset] });
    await agent.run('Snoop', { conversationId: 'conversation-A' }).result;
    await agent.run('Echo a secret', { conversationId: 'conversation-B' }).result;
    const events = await collect(agent.run('Peek', { conversationId: 'conversation-A' }));

    const [peeked] = results(events);
    expect(peeked?.ok).toBe(true);
    expect(JSON.stringify(peeked?.ok && peeked.output)).not.toContain('secret-of-B');
  });
});

describe('a tool that breaks the sandbox protocol', () => {
  const toolset = tiers.worker;

  it.each([
    ['posts null instead of its answer', 'null', 'tool-misbehaved'],
    ['answers with content 42', 'content-42', 'tool-misbehaved'],
    ['answers for another call id', 'wrong-call-id', 'tool-misbehaved'],
    ['answers under a request id nobody sent', 'unknown-id', 'tool-misbehaved'],
    ['posts garbage before its answer', 'garbage', 'tool-misbehaved'],
    ['answers twice', 'twice', 'ok'],
  ])(
    'that %s fails only its own call, and the conversation takes the next run',
    async (_what, how, expected) => {
      const session = await scriptModel([
        { toolCalls: [{ id: 'call_bad', name: 'misbehave', arguments: { how } }] },
        { text: 'after' },
        { text: 'next run' },
      ]);
      const agent = agentFor(session, { toolsets: [toolset] });
      const events = await collect(agent.run('Misbehave'));

      expect(outcome(results(events)[0])).toBe(expected);
      expect(events.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop', text: 'after' });
      await expect(agent.run('Again').result).resolves.toMatchObject({ text: 'next run' });
      // A worker that broke the protocol is not trusted with another call.
      expect(agent.sandboxStats().hostile?.killed).toBeGreaterThanOrEqual(1);
    },
  );
});

function notesTools() {
  const ran: string[] = [];
  const approved = (name: string) =>
    tool({
      name,
      description: `${name} a note.`,
      parameters: z.object({}),
      needsApproval: true,
      execute: () => {
        ran.push(name);
        return `${name} done`;
      },
    });
  return { ran, readNote: approved('read_note'), deleteAll: approved('delete_all') };
}

describe('approvals answer Airlock’s requests, not the model’s ids', () => {
  it('approving one of two calls that share a model-chosen id never runs the other', async () => {
    const { ran, readNote, deleteAll } = notesTools();
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'dup', name: 'read_note', arguments: {} },
          { id: 'dup', name: 'delete_all', arguments: {} },
        ],
      },
      { text: 'done' },
    ]);
    const agent = agentFor(session, { tools: [readNote, deleteAll] });
    const requests: ApprovalRequest[] = [];
    const events = await playRun(agent.run('Read, then delete'), (request) => {
      requests.push(request);
      return request.toolName === 'read_note' ? 'approve' : 'reject';
    });

    expect(ran).toEqual(['read_note']);
    expect(new Set(requests.map((request) => request.approvalId)).size).toBe(2);
    expect(new Set(requests.map((request) => request.callId)).size).toBe(2);
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop' });
    const messages = (await receivedBodies(session))[1]?.messages ?? [];
    const callIds = messages.at(-3)?.tool_calls?.map((call) => call.id);
    expect(messages.slice(-2).map((message) => message.tool_call_id)).toEqual(callIds);
  });

  it('refuses a decision sent twice, and a later call reusing the id waits for its own decision', async () => {
    const { ran, readNote, deleteAll } = notesTools();
    const session = await scriptModel([
      { toolCalls: [{ id: 'same', name: 'read_note', arguments: {} }] },
      { toolCalls: [{ id: 'same', name: 'delete_all', arguments: {} }] },
      { text: 'done' },
    ]);
    const agent = agentFor(session, { tools: [readNote, deleteAll] });
    const run = agent.run('Read, then delete');
    const refused: unknown[] = [];
    for await (const event of run) {
      if (event.type !== 'approval-request') continue;
      if (event.toolName === 'read_note') {
        // A double click: the second approval must not linger for a later request.
        await run.approve(event.approvalId);
        await run.approve(event.approvalId).catch((error: unknown) => refused.push(error));
      } else {
        await run.reject(event.approvalId, 'No.');
      }
    }

    expect(ran).toEqual(['read_note']);
    expect(refused).toHaveLength(1);
    expect(isAirlockError(refused[0], 'approval-already-decided')).toBe(true);
  });

  it('refuses a decision for an approval id the run never asked for', async () => {
    const { ran, readNote, deleteAll } = notesTools();
    const session = await scriptModel([
      { toolCalls: [{ name: 'delete_all', arguments: {} }] },
      { text: 'done' },
    ]);
    const agent = agentFor(session, { tools: [readNote, deleteAll] });
    const run = agent.run('Delete');
    for await (const event of run) {
      if (event.type !== 'approval-request') continue;
      await expect(run.approve('approval-nobody-asked-for')).rejects.toMatchObject({
        code: 'approval-unknown',
      });
      await expect(run.approve(event.callId)).rejects.toMatchObject({ code: 'approval-unknown' });
      await run.reject(event.approvalId);
    }
    expect(ran).toEqual([]);
  });

  it('gives a tool call without an id one of its own, and the model sees a consistent history', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: '', name: 'lookup', arguments: {} }] },
      { text: 'done' },
    ]);
    const lookup = tool({
      name: 'lookup',
      description: 'Looks up.',
      parameters: z.object({}),
      execute: () => 'found',
    });
    const agent = agentFor(session, { tools: [lookup] });
    const events = await collect(agent.run('Look up'));

    expect(events.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop' });
    const messages = (await receivedBodies(session))[1]?.messages ?? [];
    const callId = messages.at(-2)?.tool_calls?.[0]?.id;
    expect(callId).toMatch(/^call_/);
    expect(messages.at(-1)?.tool_call_id).toBe(callId);
    expect(results(events)[0]?.callId).toBe(callId);
  });
});

describe('a resumed run', () => {
  it('keeps the allowlist it started with: a tool it excluded stays out of reach after a reload', async () => {
    const { ran, readNote, deleteAll } = notesTools();
    const database = `test-${crypto.randomUUID()}`;
    const session = await scriptModel([
      { toolCalls: [{ name: 'read_note', arguments: {} }] },
      { toolCalls: [{ id: 'call_delete', name: 'delete_all', arguments: {} }] },
      { text: 'done' },
    ]);
    const first = agentFor(session, { tools: [readNote, deleteAll], memory: { database } });
    const run = first.run('Read my note', { allowedTools: ['read_note'] });
    // The tab goes away while the call waits: the run's page side ends, its record stays.
    for await (const event of run) if (event.type === 'approval-request') first.dispose();

    const second = agentFor(session, { tools: [readNote, deleteAll], memory: { database } });
    const events = await playRun(second.resume(run.runId), () => 'approve');

    expect(ran).toEqual(['read_note']);
    const deleted = results(events).find((result) => result.callId === 'call_delete');
    expect(outcome(deleted)).toBe('tool-not-allowed');
    const offered = (await receivedBodies(session))[1]?.tools?.map((t) => t.function.name);
    expect(offered).toEqual(['read_note']);
  });
});

describe('a call that ran before the tab closed', () => {
  it('is never run again by the resumed run: the model is told it was interrupted', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const ran: string[] = [];
    let started: () => void = () => {};
    const sending = new Promise<void>((resolve) => {
      started = resolve;
    });
    const approved = (name: string, execute: () => unknown) =>
      tool({
        name,
        description: `${name}, once approved.`,
        parameters: z.object({}),
        needsApproval: true,
        execute: () => {
          ran.push(name);
          return execute();
        },
      });
    // Sends, and is still sending when the tab closes.
    const sendEmail = approved('send_email', () => {
      started();
      return new Promise(() => {});
    });
    const archive = approved('archive', () => 'archived');
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_send', name: 'send_email', arguments: {} },
          { id: 'call_archive', name: 'archive', arguments: {} },
        ],
      },
      { text: 'done' },
    ]);
    const first = agentFor(session, { tools: [sendEmail, archive], memory: { database } });
    const run = first.run('Send it, then archive');
    for await (const event of run) {
      if (event.type !== 'approval-request' || event.toolName !== 'send_email') continue;
      await run.approve(event.approvalId);
      // The email is on its way and archive still waits: the tab closes now.
      await sending;
      first.dispose();
    }

    const second = agentFor(session, { tools: [sendEmail, archive], memory: { database } });
    const events = await playRun(second.resume(run.runId), () => 'approve');

    expect(ran).toEqual(['send_email', 'archive']);
    const byCall = Object.fromEntries(results(events).map((result) => [result.callId, result]));
    expect(outcome(byCall.call_send)).toBe('tool-interrupted');
    expect(outcome(byCall.call_archive)).toBe('ok');
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop' });
  });
});

describe('whatever a schema or a tool throws goes back to the model', () => {
  const parseJson = tool({
    name: 'parse_json',
    description: 'Parses its data argument as JSON, in its schema.',
    parameters: z.object({ data: z.string().transform((text) => JSON.parse(text) as unknown) }),
    execute: ({ data }) => ({ parsed: data }),
  });
  const throwUnprintable = tool({
    name: 'throw_unprintable',
    description: 'Throws a value that cannot be turned into text.',
    parameters: z.object({}),
    execute: () => {
      throw {
        toString() {
          throw new Error('no toString');
        },
        toJSON() {
          throw new Error('no toJSON');
        },
      };
    },
  });

  it.each([
    ['a page tool', { tools: [parseJson, throwUnprintable] }],
    ['a sandboxed tool', { toolsets: [tiers.worker] }],
  ])(
    'in %s: a throwing transform is tool-invalid-arguments, an unprintable throw is tool-failed',
    async (_where, tools) => {
      const session = await scriptModel([
        {
          toolCalls: [
            { id: 'call_parse', name: 'parse_json', arguments: { data: 'not json' } },
            { id: 'call_throw', name: 'throw_unprintable', arguments: {} },
          ],
        },
        { text: 'done' },
      ]);
      const agent = agentFor(session, tools);
      const events = await collect(agent.run('Parse and throw'));

      const byCall = Object.fromEntries(results(events).map((result) => [result.callId, result]));
      expect(outcome(byCall.call_parse)).toBe('tool-invalid-arguments');
      expect(outcome(byCall.call_throw)).toBe('tool-failed');
      expect(events.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop' });
    },
  );
});

describe('the page’s side of a run’s port', () => {
  it('ignores whatever the page posts that is not an ack, a cancel or an approval, and the run goes on', async () => {
    const words = 'word '.repeat(600).trim();
    const session = await scriptModel([{ text: words }, { text: 'next run' }]);
    const agent = agentFor(session);
    await agent.ready;
    // The page end of the run's port, as the run itself holds it: caught as it is made.
    const Original = globalThis.MessageChannel;
    let pagePort: MessagePort | undefined;
    globalThis.MessageChannel = class extends Original {
      constructor() {
        super();
        pagePort ??= this.port1;
      }
    };
    let run: AgentRun;
    try {
      run = agent.run('Talk');
    } finally {
      globalThis.MessageChannel = Original;
    }
    for (const message of [
      null,
      'garbage',
      42,
      { kind: 'ack', count: -1e9 },
      { kind: 'ack', count: 'many' },
      { kind: 'approval', approvalId: 42, approved: 'yes' },
      { kind: 'approval', approvalId: 'approval_forged', approved: true },
      { kind: 'unknown' },
    ]) {
      pagePort?.postMessage(message);
    }

    const events = await collect(run);
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop', text: words });
    await expect(agent.run('Again').result).resolves.toMatchObject({ text: 'next run' });
  });
});
