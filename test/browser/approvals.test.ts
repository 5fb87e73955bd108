import { tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentOver,
  collect,
  deleteNoteTool,
  MODEL_APIS,
  readToolOutput,
  receivedBodies,
  scriptModel,
  testToolsWorker,
} from './support';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(MODEL_APIS)('approvals and permissions, over %s', (api) => {
  const agentFor = agentOver(api);

  it('holds a call that needs approval until the page approves it', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Deleted.' },
    ]);
    const agent = agentFor(session, { tools: [deleteNote] });
    const run = agent.run('Delete note n1');

    const seen: string[] = [];
    for await (const event of run) {
      seen.push(event.type);
      if (event.type === 'approval-request') {
        expect(event).toMatchObject({
          callId: 'call_del',
          toolName: 'delete_note',
          arguments: { id: 'n1' },
        });
        await pause(150);
        expect(counter.runs).toBe(0);
        await run.approve(event.approvalId);
      }
    }

    expect(counter.runs).toBe(1);
    expect(seen.indexOf('approval-request')).toBeLessThan(seen.indexOf('tool-result'));
    expect((await run.result).text).toBe('Deleted.');
  });

  it('never runs a rejected call, and the model reads the reason', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Understood, I left it.' },
    ]);
    const agent = agentFor(session, { tools: [deleteNote] });
    const run = agent.run('Delete note n1');

    for await (const event of run) {
      if (event.type === 'approval-request')
        await run.reject(event.approvalId, 'That note is important.');
    }

    expect(counter.runs).toBe(0);
    expect((await run.result).text).toBe('Understood, I left it.');
    const toolMessage = (await receivedBodies(session))[1]?.messages.at(-1);
    const body = JSON.parse(readToolOutput(toolMessage?.content).body);
    expect(body.error).toEqual({
      code: 'tool-rejected',
      message: 'The user rejected this call to "delete_note": That note is important.',
    });
    expect(await agent.memory.toolCalls()).toEqual([
      expect.objectContaining({
        callId: 'call_del',
        toolName: 'delete_note',
        outcome: 'tool-rejected',
        arguments: { id: 'n1' },
      }),
    ]);
  });

  it('asks for approval in a sandbox tool only when its rule says so from the arguments', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_tmp', name: 'write_file', arguments: { path: '/tmp/a.txt' } },
          { id: 'call_etc', name: 'write_file', arguments: { path: '/etc/passwd' } },
        ],
      },
      { text: 'Wrote one file.' },
    ]);
    const agent = agentFor(session, { toolsets: [{ name: 'test', worker: testToolsWorker }] });
    const run = agent.run('Write two files');

    const requested: string[] = [];
    const outcomes: Record<string, string> = {};
    for await (const event of run) {
      if (event.type === 'approval-request') {
        requested.push(event.callId);
        await run.reject(event.approvalId, 'Not the system folder.');
      }
      if (event.type === 'tool-result') outcomes[event.callId] = event.ok ? 'ok' : event.error.code;
    }

    expect(requested).toEqual(['call_etc']);
    expect(outcomes).toEqual({ call_tmp: 'ok', call_etc: 'tool-rejected' });
  });

  it('neither offers nor runs a tool outside the allowlist', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const lookup = tool({
      name: 'lookup',
      description: 'Looks a note up.',
      parameters: z.object({ id: z.string() }),
      execute: ({ id }) => ({ id, text: 'hello' }),
    });
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'I may not delete notes.' },
    ]);
    // A viewer's run: the agent has both tools, the run narrows them to the read-only one.
    const agent = agentFor(session, { tools: [deleteNote, lookup] });
    const events = await collect(agent.run('Delete note n1', { allowedTools: ['lookup'] }));

    expect(counter.runs).toBe(0);
    expect(events.some((event) => event.type === 'approval-request')).toBe(false);
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({
      ok: false,
      error: {
        code: 'tool-not-allowed',
        message: expect.stringContaining('Available tools: lookup.'),
      },
    });
    const [first] = await receivedBodies(session);
    expect(first?.tools?.map((offered) => offered.function.name)).toEqual(['lookup']);
  });

  it('rejects an agent allowlist naming a tool that does not exist', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, { allowedTools: ['no_such_tool'] });
    await expect(agent.ready).rejects.toMatchObject({
      code: 'invalid-options',
      message: expect.stringContaining('no_such_tool'),
    });
  });

  it('records every tool call with its arguments, outcome and duration', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_echo', name: 'echo', arguments: { text: 'hi' } },
          { id: 'call_bad', name: 'echo', arguments: { text: 3 } },
        ],
      },
      { text: 'ok' },
    ]);
    const agent = agentFor(session, { toolsets: [{ name: 'test', worker: testToolsWorker }] });
    const run = agent.run('Echo');
    await run.result;

    // Calls settle concurrently, so the log is compared in call-id order.
    const records = [...(await agent.memory.toolCalls())].sort((a, b) =>
      b.callId.localeCompare(a.callId),
    );
    expect(
      records.map(({ callId, toolName, arguments: args, outcome, runId }) => ({
        callId,
        toolName,
        args,
        outcome,
        runId,
      })),
    ).toEqual([
      {
        callId: 'call_echo',
        toolName: 'echo',
        args: { text: 'hi' },
        outcome: 'ok',
        runId: run.runId,
      },
      {
        callId: 'call_bad',
        toolName: 'echo',
        args: { text: 3 },
        outcome: 'tool-invalid-arguments',
        runId: run.runId,
      },
    ]);
    for (const record of records) expect(record.durationMs).toBeGreaterThanOrEqual(0);
  });
});
