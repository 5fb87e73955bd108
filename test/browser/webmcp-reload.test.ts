import { type AgentEvent, isAirlockError, tool } from 'airlock-agents';
import { exposeToWebMCP, type RegisteredTool } from 'airlock-agents/webmcp';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { agentFor, openRaw, readRawRow, scriptModel, writeRawRow } from './support';
import { freshContext } from './webmcp-support';

// Issue #52: a WebMCP caller's tool call waiting for the app's approval when the page reloads.
// The calling agent's promise went with the page, so nobody can receive the result: the call
// is settled as cancelled in the audit log and the run's record, never left half-approved,
// never resumed into a run of the model, never executed. A reload is a fresh agent on the
// same database, as the other resume tests make it.

function deleteNote(ran: string[]) {
  return tool({
    name: 'delete_note',
    description: 'Deletes a note.',
    parameters: z.object({ id: z.string() }),
    needsApproval: true,
    execute: ({ id }) => {
      ran.push(`delete ${id}`);
      return `deleted ${id}`;
    },
  });
}

function listed(tools: RegisteredTool[], name: string): RegisteredTool {
  const found = tools.find((each) => each.name === name);
  if (!found) throw new Error(`${name} is not listed.`);
  return found;
}

/** A WebMCP call of delete_note left waiting for approval by a page that went away; its run's id. */
async function callLeftWaiting(database: string, conversationId: string, ran: string[]) {
  const session = await scriptModel([{ text: 'The model must not be asked.' }]);
  const before = agentFor(session, { tools: [deleteNote(ran)], memory: { database } });
  const context = freshContext();
  let asked!: () => void;
  const waiting = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const exposure = await exposeToWebMCP(before, {
    modelContext: context,
    tools: ['delete_note'],
    // The user has not answered yet when the page goes.
    toolCalls: {
      conversationId,
      onApproval: () => {
        asked();
        return new Promise<boolean>(() => {});
      },
    },
  });
  onTestFinished(() => exposure.unregister());
  const call = context
    .executeTool(listed(await context.getTools(), 'delete_note'), { id: 'n1' })
    .catch((error: unknown) => error);
  await waiting;
  // The page goes away: its agent with it; the run's record stays in IndexedDB.
  await before.dispose();
  // The caller hears at once that its call will not be answered, not when the user clicks.
  const heard = (await call) as Error;
  expect(heard.name).toBe('UnknownError');
  expect(heard.message).toMatch(/disposed/i);
  return session;
}

describe('a WebMCP tool call waiting for approval, across a reload', () => {
  it('is settled as cancelled when an agent next starts on the database: audit, run and history say so, and the tool never runs', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = `webmcp-${crypto.randomUUID()}`;
    const ran: string[] = [];
    const session = await callLeftWaiting(database, conversationId, ran);

    const after = agentFor(session, { tools: [deleteNote(ran)], memory: { database } });
    await after.ready;
    expect(await after.memory.listRuns({ statuses: ['awaiting-approval'] })).toEqual([]);
    const [run] = await after.memory.listRuns({ conversationId });
    if (!run) throw new Error('The run is not stored.');
    expect(run).toMatchObject({ status: 'failed', caller: 'webmcp' });
    expect(run.pendingStep).toBeUndefined();
    expect(await after.memory.toolCalls({ runId: run.id })).toEqual([
      expect.objectContaining({
        toolName: 'delete_note',
        caller: 'webmcp',
        outcome: 'tool-cancelled',
        conversationId,
      }),
    ]);
    // The conversation's history is whole: the call and its cancelled result.
    const stored = await after.memory.getConversation(conversationId);
    const messages = stored?.messages.map((record) => record.message) ?? [];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(JSON.stringify(messages.at(-1))).toContain('tool-cancelled');

    // A resume is refused: nothing is left to approve, and no model run grows out of it.
    const events: AgentEvent[] = [];
    const resumed = after.resume(run.id);
    const error = await (async () => {
      for await (const event of resumed) events.push(event);
      return resumed.result;
    })().catch((thrown: unknown) => thrown);
    expect(isAirlockError(error) && error.code).toBe('run-not-resumable');
    expect(events.some((event) => event.type === 'approval-request')).toBe(false);
    expect(ran).toEqual([]);
    expect(await session.requests()).toEqual([]);
  });

  it('is never resumed once its caller gave up: a call the caller aborted stays unanswered and unrun', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = `webmcp-${crypto.randomUUID()}`;
    const ran: string[] = [];
    const session = await scriptModel([{ text: 'The model must not be asked.' }]);
    const agent = agentFor(session, { tools: [deleteNote(ran)], memory: { database } });
    const context = freshContext();
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const exposure = await exposeToWebMCP(agent, {
      modelContext: context,
      tools: ['delete_note'],
      toolCalls: {
        conversationId,
        onApproval: () => {
          asked();
          return new Promise<boolean>(() => {});
        },
      },
    });
    onTestFinished(() => exposure.unregister());
    const giveUp = new AbortController();
    const call = context
      .executeTool(
        listed(await context.getTools(), 'delete_note'),
        { id: 'n1' },
        {
          signal: giveUp.signal,
        },
      )
      .catch((error: unknown) => error);
    await waiting;
    giveUp.abort();
    expect(await call).toBeInstanceOf(Error);

    const [run] = await agent.memory.listRuns({ conversationId });
    if (!run) throw new Error('The run is not stored.');
    expect(run).toMatchObject({ caller: 'webmcp' });
    const error = await agent.resume(run.id).result.catch((thrown: unknown) => thrown);
    expect(isAirlockError(error) && error.code).toBe('run-not-resumable');
    expect(isAirlockError(error) && error.details).toMatchObject({ reason: 'webmcp-caller' });
    expect(ran).toEqual([]);
    expect(await session.requests()).toEqual([]);
  });

  it('is left alone while its page is still there: a second tab starting on the database does not cancel it, and the app can still approve it', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const ran: string[] = [];
    const session = await scriptModel([{ text: 'The model must not be asked.' }]);
    const first = agentFor(session, { tools: [deleteNote(ran)], memory: { database } });
    const context = freshContext();
    let answer!: (approved: boolean) => void;
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const exposure = await exposeToWebMCP(first, {
      modelContext: context,
      tools: ['delete_note'],
      toolCalls: {
        onApproval: () => {
          asked();
          return new Promise<boolean>((resolve) => {
            answer = resolve;
          });
        },
      },
    });
    onTestFinished(() => exposure.unregister());
    const call = context.executeTool(listed(await context.getTools(), 'delete_note'), {
      id: 'n1',
    });
    await waiting;

    const second = agentFor(session, { tools: [deleteNote(ran)], memory: { database } });
    await second.ready;
    const [run] = await second.memory.listRuns({ statuses: ['awaiting-approval'] });
    expect(run).toMatchObject({ status: 'awaiting-approval', caller: 'webmcp' });

    answer(true);
    expect(JSON.parse((await call) ?? 'null')).toBe('deleted n1');
    expect(ran).toEqual(['delete n1']);
    expect(await session.requests()).toEqual([]);
  });

  it('does not resume a waiting WebMCP run whose row was rewritten to look like the model’s, and keeps the row', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = `webmcp-${crypto.randomUUID()}`;
    const ran: string[] = [];
    const session = await callLeftWaiting(database, conversationId, ran);
    // Same-origin code strips `caller` before any agent starts again, hoping for a resume.
    const [row] = await allRuns(database);
    expect(row).toMatchObject({ status: 'awaiting-approval', caller: 'webmcp' });
    const { caller: _caller, ...forged } = row as Record<string, unknown>;
    await writeRawRow(database, 'runs', forged);

    const after = agentFor(session, { tools: [deleteNote(ran)], memory: { database } });
    await after.ready;
    const id = String(forged.id);
    const error = await after.resume(id).result.catch((thrown: unknown) => thrown);
    expect(isAirlockError(error) && error.code).toBe('run-not-resumable');
    expect(isAirlockError(error) && error.details.reason).toBe('altered');
    // Kept as it was: a row the agent worker did not seal is never settled either.
    expect(await readRawRow(database, 'runs', id)).toEqual(forged);
    expect(ran).toEqual([]);
    expect(await session.requests()).toEqual([]);
  });
});

/** Every row of the runs table, read as same-origin code can. */
async function allRuns(database: string): Promise<unknown[]> {
  const db = await openRaw(database);
  try {
    return await new Promise((resolve, reject) => {
      const request = db.transaction('runs').objectStore('runs').getAll();
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  } finally {
    db.close();
  }
}
