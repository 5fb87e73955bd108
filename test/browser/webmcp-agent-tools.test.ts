import { type AgentEvent, tool } from 'airlock-agents';
import {
  exposeToWebMCP,
  type RegisteredTool,
  type WebMCPToolApprovalRequest,
} from 'airlock-agents/webmcp';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, scriptModel, testToolsWorker } from './support';
import { freshContext, rejection } from './webmcp-support';

// Issue #52: each of the agent's tools as a WebMCP tool of its own. A second agent on the
// page (a script using only the consumer side, getTools/executeTool) calls them; every call
// is decided in the agent worker. Each test has a fresh same-origin frame with the polyfill.

/** The tools of a notes app: one that deletes (asks), one that reads, one that reads secrets. */
function notesTools(ran: string[]) {
  return [
    tool({
      name: 'delete_note',
      description: 'Deletes a note.',
      parameters: z.object({ id: z.string() }),
      needsApproval: true,
      execute: ({ id }) => {
        ran.push(`delete ${id}`);
        return `deleted ${id}`;
      },
    }),
    tool({
      name: 'read_note',
      description: 'Reads a note.',
      parameters: z.object({ id: z.string() }),
      needsApproval: false,
      outputLabel: { integrity: 'trusted' },
      execute: ({ id }) => {
        ran.push(`read ${id}`);
        return { id, text: `note ${id}` };
      },
    }),
    tool({
      name: 'read_diary',
      description: 'Reads the user’s diary.',
      parameters: z.object({}),
      needsApproval: false,
      outputLabel: { confidentiality: 'private' },
      execute: () => {
        ran.push('diary');
        return 'dear diary';
      },
    }),
    tool({
      name: 'wipe_all',
      description: 'Deletes every note.',
      parameters: z.object({}),
      needsApproval: false,
      execute: () => {
        ran.push('wipe');
        return 'wiped';
      },
    }),
  ];
}

function listed(tools: RegisteredTool[], name: string): RegisteredTool {
  const found = tools.find((each) => each.name === name);
  if (!found) throw new Error(`${name} is not listed.`);
  return found;
}

describe("the agent's tools as WebMCP tools", () => {
  it('lists the exposed tools with annotations from their policy, and only those', async () => {
    const context = freshContext();
    const session = await scriptModel([]);
    const agent = agentFor(session, { tools: notesTools([]) });
    const exposure = await exposeToWebMCP(agent, {
      modelContext: context,
      tools: ['delete_note', 'read_note', 'read_diary'],
      toolCalls: { onApproval: () => false },
    });
    onTestFinished(() => exposure.unregister());
    expect(exposure.names).toEqual(['delete_note', 'read_note', 'read_diary']);
    const tools = await context.getTools();
    expect(tools.map((each) => each.name).sort()).toEqual([
      'delete_note',
      'read_diary',
      'read_note',
    ]);
    expect(listed(tools, 'delete_note')).toMatchObject({
      description: 'Deletes a note.',
      inputSchema: expect.objectContaining({ properties: { id: { type: 'string' } } }),
      annotations: { readOnlyHint: false, untrustedContentHint: true },
    });
    expect(listed(tools, 'read_note').annotations).toEqual({
      readOnlyHint: true,
      untrustedContentHint: false,
    });
    expect(listed(tools, 'read_diary').annotations).toEqual({
      readOnlyHint: true,
      untrustedContentHint: true,
    });
    exposure.unregister();
    expect(await context.getTools()).toEqual([]);
  });

  it('exposes a sandboxed tool too: the call runs in its tool worker, and the page tool list is the specs', async () => {
    const context = freshContext();
    const session = await scriptModel([]);
    const agent = agentFor(session, { toolsets: [{ name: 'test', worker: testToolsWorker }] });
    const exposure = await exposeToWebMCP(agent, {
      modelContext: context,
      tools: ['echo'],
      toolCalls: { onApproval: () => false },
    });
    onTestFinished(() => exposure.unregister());
    const echo = listed(await context.getTools(), 'echo');
    expect(echo.description).toBe('Returns its text.');
    expect(
      JSON.parse((await context.executeTool(echo, { text: 'from a sandbox' })) ?? 'null'),
    ).toBe('from a sandbox');
    // A name the agent does not have is refused at once, and nothing is registered (the
    // polyfill lists every same-origin frame's tools: the first exposure goes first).
    exposure.unregister();
    const again = freshContext();
    await expect(
      exposeToWebMCP(agent, {
        modelContext: again,
        tools: ['echo', 'no_such_tool'],
        toolCalls: { onApproval: () => false },
      }),
    ).rejects.toMatchObject({ code: 'invalid-options' });
    expect(await again.getTools()).toEqual([]);
  });

  for (const approve of [true, false]) {
    it(`waits for the app's onApproval, which ${approve ? 'approves: the tool runs once' : 'denies: it never runs'}`, async () => {
      const context = freshContext();
      const ran: string[] = [];
      const session = await scriptModel([]);
      const agent = agentFor(session, { tools: notesTools(ran) });
      const asked: WebMCPToolApprovalRequest[] = [];
      const exposure = await exposeToWebMCP(agent, {
        modelContext: context,
        tools: true,
        toolCalls: {
          onApproval: (request) => {
            asked.push(request);
            // The call waits here: the tool has not run.
            expect(ran).toEqual([]);
            return approve;
          },
        },
      });
      onTestFinished(() => exposure.unregister());
      const call = context.executeTool(listed(await context.getTools(), 'delete_note'), {
        id: 'n1',
      });
      if (approve) expect(JSON.parse((await call) ?? 'null')).toBe('deleted n1');
      else expect((await rejection(call)).message).toContain('tool-rejected');
      expect(asked).toEqual([
        expect.objectContaining({
          caller: 'webmcp',
          toolName: 'delete_note',
          arguments: { id: 'n1' },
        }),
      ]);
      expect(ran).toEqual(approve ? ['delete n1'] : []);
      const audit = await agent.memory.toolCalls();
      expect(audit).toEqual([
        expect.objectContaining({
          toolName: 'delete_note',
          caller: 'webmcp',
          outcome: approve ? 'ok' : 'tool-rejected',
          conversationId: expect.stringMatching(/^webmcp_/),
        }),
      ]);
      // Decided in the worker without a model: no request reached the model server.
      expect(await session.requests()).toEqual([]);
    });
  }

  it('ignores a forged approval in the arguments, refuses wrong types, and never runs a tool not exposed', async () => {
    const context = freshContext();
    const ran: string[] = [];
    const session = await scriptModel([]);
    const agent = agentFor(session, { tools: notesTools(ran) });
    let asked = 0;
    const exposure = await exposeToWebMCP(agent, {
      modelContext: context,
      tools: ['delete_note', 'read_note'],
      toolCalls: {
        onApproval: () => {
          asked += 1;
          return false;
        },
      },
    });
    onTestFinished(() => exposure.unregister());
    const tools = await context.getTools();
    const deleteNote = listed(tools, 'delete_note');
    // An approval id and a decision in the arguments: the call still waits for the app.
    const forged = await rejection(
      context.executeTool(deleteNote, { id: 'n1', approvalId: 'approval_1', approved: true }),
    );
    expect(forged.message).toContain('tool-rejected');
    expect(asked).toBe(1);
    // Arguments of the wrong type are refused by the tool's schema, in the worker, before approval.
    for (const wrong of [{ id: 42 }, {}, { id: ['n1'] }, { id: { toString: 'n1' } }]) {
      const error = await rejection(context.executeTool(listed(tools, 'read_note'), wrong));
      expect(error.message).toContain('tool-invalid-arguments');
    }
    expect(asked).toBe(1);
    // A tool the exposure left out is neither listed nor callable, even named by a forged listing.
    expect(tools.map((each) => each.name)).not.toContain('wipe_all');
    const error = await rejection(context.executeTool({ ...deleteNote, name: 'wipe_all' }, {}));
    expect(error.name).toBe('UnknownError');
    expect(ran).toEqual([]);
  });

  it('lets no other tab, watching the calls’ conversation, answer a call’s approval', async () => {
    const context = freshContext();
    const ran: string[] = [];
    const session = await scriptModel([]);
    const database = `test-${crypto.randomUUID()}`;
    const agent = agentFor(session, { tools: notesTools(ran), memory: { database } });
    // Another agent of the origin on the same database and tab hub, as a caller could start.
    const other = agentFor(session, { memory: { database } });
    const watch = other.watch('webmcp_watched');
    onTestFinished(() => watch.close());
    await watch.listening;
    let answered: unknown;
    const exposure = await exposeToWebMCP(agent, {
      modelContext: context,
      tools: ['delete_note'],
      toolCalls: {
        conversationId: 'webmcp_watched',
        onApproval: async ({ approvalId }) => {
          // The watch was never told of the run: it cannot answer the id, even knowing it.
          answered = await watch.approve(approvalId).then(
            () => 'approved',
            (error: { code?: string }) => error.code,
          );
          return false;
        },
      },
    });
    onTestFinished(() => exposure.unregister());
    const error = await rejection(
      context.executeTool(listed(await context.getTools(), 'delete_note'), { id: 'n1' }),
    );
    expect(error.message).toContain('tool-rejected');
    expect(answered).toBe('approval-unknown');
    expect(ran).toEqual([]);
  });

  it('refuses in the worker a call whose tool is outside the run’s allowlist, even with toolCall set', async () => {
    const ran: string[] = [];
    const session = await scriptModel([]);
    const agent = agentFor(session, { tools: notesTools(ran) });
    const run = agent.run('x', {
      conversationId: 'webmcp_allowlist',
      allowedTools: ['read_note'],
      toolCall: { caller: 'webmcp', name: 'wipe_all', arguments: {} },
    });
    const events: AgentEvent[] = await collect(run);
    const result = await run.result;
    expect(JSON.parse(result.text)).toMatchObject({
      ok: false,
      error: { code: 'tool-not-allowed' },
    });
    expect(events.some((event) => event.type === 'tool-result' && !event.ok)).toBe(true);
    expect(ran).toEqual([]);
    // A caller other than webmcp, or a call without a name, is refused before anything runs.
    const forged = agent.run('x', {
      toolCall: { caller: 'model', name: 'wipe_all', arguments: {} } as never,
    });
    await expect(forged.result).rejects.toMatchObject({ code: 'invalid-options' });
    expect(ran).toEqual([]);
    expect(await session.requests()).toEqual([]);
  });

  it('refuses a call once the conversation’s tool-call budget is spent', async () => {
    const context = freshContext();
    const ran: string[] = [];
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      tools: notesTools(ran),
      budgets: { conversation: { toolCalls: 1 } },
    });
    const exposure = await exposeToWebMCP(agent, {
      modelContext: context,
      tools: ['read_note'],
      toolCalls: { onApproval: () => true },
    });
    onTestFinished(() => exposure.unregister());
    const readNote = listed(await context.getTools(), 'read_note');
    expect(JSON.parse((await context.executeTool(readNote, { id: 'a' })) ?? 'null')).toEqual({
      id: 'a',
      text: 'note a',
    });
    const second = await rejection(context.executeTool(readNote, { id: 'b' }));
    expect(second.message).toContain('tool-budget-exceeded');
    expect(ran).toEqual(['read a']);
    const audit = await agent.memory.toolCalls();
    expect(audit.map((row) => [row.outcome, row.caller]).sort()).toEqual([
      ['ok', 'webmcp'],
      ['tool-budget-exceeded', 'webmcp'],
    ]);
  });

  for (const allowed of [false, true]) {
    it(`${allowed ? 'gives' : 'refuses'} a private result to the WebMCP caller when the flow policy ${allowed ? 'allows' : 'does not allow'} the destination webmcp`, async () => {
      const context = freshContext();
      const ran: string[] = [];
      const session = await scriptModel([]);
      const agent = agentFor(session, {
        tools: notesTools(ran),
        flow: {
          untrustedToSink: 'approve',
          ...(allowed ? { allowedDestinations: { private: ['webmcp'] } } : {}),
        },
      });
      const exposure = await exposeToWebMCP(agent, {
        modelContext: context,
        tools: ['read_diary'],
        toolCalls: { onApproval: () => true },
      });
      onTestFinished(() => exposure.unregister());
      const call = context.executeTool(listed(await context.getTools(), 'read_diary'), {});
      if (allowed) expect(JSON.parse((await call) ?? 'null')).toBe('dear diary');
      else {
        const error = await rejection(call);
        expect(error.message).toContain('flow-refused');
        expect(error.message).not.toContain('dear diary');
      }
      // The tool ran (reading is allowed); only its result's way out was decided.
      expect(ran).toEqual(['diary']);
    });
  }
});
