import { isAirlockError, tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, readToolOutput, receivedBodies, scriptModel } from './support';

async function failure(result: Promise<unknown>) {
  try {
    await result;
  } catch (error) {
    return error as { code: string; details: Record<string, unknown> };
  }
  throw new Error('The run did not fail.');
}

function readFileTool() {
  const reads: string[] = [];
  const readFile = tool({
    name: 'read_file',
    description: 'Reads a file of the project.',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      reads.push(path);
      return `contents of ${path}`;
    },
  });
  return { readFile, reads };
}

describe('guardrails on the page', () => {
  it('blocks a prompt with an input guardrail before any request reaches the model, storing nothing', async () => {
    const session = await scriptModel([{ text: 'never sent' }]);
    const agent = agentFor(session, {
      guardrails: {
        input: function noPasswords(input) {
          return /password/i.test(input)
            ? { action: 'block', reason: 'Do not share passwords.' }
            : { action: 'allow' };
        },
      },
    });

    const run = agent.run('My password is hunter2, remember it');
    const events = await collect(run);
    const error = await failure(run.result);

    expect(isAirlockError(error, 'guardrail-blocked')).toBe(true);
    expect(error.details).toEqual({
      guardrail: 'input',
      name: 'noPasswords',
      reason: 'Do not share passwords.',
    });
    expect(events.map((event) => event.type)).toEqual(['run-error']);
    expect(await session.requests()).toHaveLength(0);
    expect(await agent.memory.getConversation(agent.conversationId)).toBeUndefined();
    expect(await agent.memory.listRuns({ conversationId: agent.conversationId })).toEqual([]);
  });

  it('sends and stores the input as an input guardrail rewrote it', async () => {
    const session = await scriptModel([{ text: 'Noted.' }]);
    const agent = agentFor(session, {
      memory: { tools: false },
      guardrails: {
        input: (input) => ({ action: 'rewrite', value: input.replace(/\S+@\S+/g, '[email]') }),
      },
    });

    await agent.run('Mail ada@example.com tomorrow').result;

    const [body] = await receivedBodies(session);
    expect(body?.messages).toEqual([{ role: 'user', content: 'Mail [email] tomorrow' }]);
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages[0]?.message).toEqual({
      role: 'user',
      content: 'Mail [email] tomorrow',
    });
    expect(stored?.conversation.title).toBe('Mail [email] tomorrow');
  });

  it('blocks a path argument with a tool-argument guardrail: the tool never runs and the model is told why', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_secret', name: 'read_file', arguments: { path: '../../etc/passwd' } },
          { id: 'call_readme', name: 'read_file', arguments: { path: 'docs/README.md' } },
        ],
      },
      { text: 'I can only read files inside docs/.' },
    ]);
    const { readFile, reads } = readFileTool();
    const seen: unknown[] = [];
    const agent = agentFor(session, {
      tools: [readFile],
      memory: { tools: false },
      guardrails: {
        toolArguments: function insideDocs(call) {
          seen.push(call);
          const { path } = call.arguments as { path: string };
          return path.startsWith('docs/') && !path.includes('..')
            ? { action: 'allow' }
            : { action: 'block', reason: `"${path}" is outside docs/.` };
        },
      },
    });

    const run = agent.run('Show me the password file');
    const events = await collect(run);
    const result = await run.result;

    expect(result.reason).toBe('stop');
    expect(reads).toEqual(['docs/README.md']);
    expect(seen).toContainEqual({
      callId: 'call_secret',
      toolName: 'read_file',
      arguments: { path: '../../etc/passwd' },
    });
    const blocked = events.find(
      (event) => event.type === 'tool-result' && event.callId === 'call_secret',
    );
    expect(blocked).toMatchObject({ ok: false, error: { code: 'tool-blocked' } });
    const toolMessage = (await receivedBodies(session))[1]?.messages.find(
      (message) => message.tool_call_id === 'call_secret',
    );
    const output = readToolOutput(toolMessage?.content);
    expect(output.status).toBe('error');
    expect(JSON.parse(output.body).error).toEqual({
      code: 'tool-blocked',
      message:
        'The call to "read_file" was blocked by the guardrail "insideDocs": "../../etc/passwd" is outside docs/.',
    });
    const audit = await agent.memory.toolCalls({ conversationId: agent.conversationId });
    expect(audit.map((record) => [record.callId, record.outcome]).sort()).toEqual([
      ['call_readme', 'ok'],
      ['call_secret', 'tool-blocked'],
    ]);
  });

  it('runs a tool with the arguments a guardrail rewrote, checked against the schema again', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'README.md' } }] },
      { toolCalls: [{ id: 'call_2', name: 'read_file', arguments: { path: 'x' } }] },
      { text: 'Done.' },
    ]);
    const { readFile, reads } = readFileTool();
    const agent = agentFor(session, {
      tools: [readFile],
      memory: { tools: false },
      guardrails: {
        toolArguments: ({ arguments: args }) => {
          const { path } = args as { path: string };
          return path === 'x'
            ? { action: 'rewrite', value: { path: 42 } }
            : { action: 'rewrite', value: { path: `docs/${path}` } };
        },
      },
    });

    const run = agent.run('Read the readme');
    const events = await collect(run);
    await run.result;

    expect(reads).toEqual(['docs/README.md']);
    const results = events.flatMap((event) =>
      event.type === 'tool-result' ? [event.ok ? event.output : event.error.code] : [],
    );
    expect(results).toEqual(['contents of docs/README.md', 'tool-invalid-arguments']);
    const audit = await agent.memory.toolCalls({ runId: run.runId });
    expect(audit.find((record) => record.callId === 'call_1')?.arguments).toEqual({
      path: 'docs/README.md',
    });
  });

  it('rewrites the final answer with an output guardrail: the page is told, and the rewrite is what is stored', async () => {
    const session = await scriptModel([
      { text: 'Call me on 555-0100 any time.' },
      { text: 'Sure.' },
    ]);
    const agent = agentFor(session, {
      memory: { tools: false },
      guardrails: {
        output: function redactPhones(text) {
          return { action: 'rewrite', value: text.replace(/\d{3}-\d{4}/g, '[phone]') };
        },
      },
    });

    const run = agent.run('How do I reach you?');
    const events = await collect(run);
    const result = await run.result;
    await agent.run('Thanks').result;

    expect(result.text).toBe('Call me on [phone] any time.');
    expect(result.steps[0]?.text).toBe('Call me on [phone] any time.');
    const types = events.map((event) => event.type);
    expect(types.indexOf('text-rewrite')).toBeGreaterThan(types.lastIndexOf('text-delta'));
    expect(types.indexOf('text-rewrite')).toBeLessThan(types.indexOf('step-finish'));
    expect(events.find((event) => event.type === 'text-rewrite')).toEqual({
      type: 'text-rewrite',
      step: 1,
      text: 'Call me on [phone] any time.',
      guardrails: ['redactPhones'],
    });
    // The next run replays the rewritten answer, never the original.
    const bodies = await receivedBodies(session);
    expect(bodies[1]?.messages[1]).toEqual({
      role: 'assistant',
      content: 'Call me on [phone] any time.',
    });
  });

  it('ends the run with guardrail-blocked when an output guardrail blocks, keeping none of the answer', async () => {
    const session = await scriptModel([{ text: 'The launch code is 0000.' }]);
    const agent = agentFor(session, {
      memory: { tools: false },
      guardrails: {
        output: (text) =>
          text.includes('launch code')
            ? { action: 'block', reason: 'Classified.' }
            : { action: 'allow' },
      },
    });

    const error = await failure(agent.run('What is the launch code?').result);

    expect(error.code).toBe('guardrail-blocked');
    expect(error.details).toEqual({ guardrail: 'output', name: 'output', reason: 'Classified.' });
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((record) => record.message)).toEqual([
      { role: 'user', content: 'What is the launch code?' },
    ]);
    const [record] = await agent.memory.listRuns({ conversationId: agent.conversationId });
    expect(record).toMatchObject({ status: 'failed', partialText: '', usage: { modelCalls: 1 } });
  });

  it('ends a run at once when it is aborted while an input guardrail has not answered, sending and storing nothing', async () => {
    const session = await scriptModel([{ text: 'never sent' }]);
    let asked: () => void = () => {};
    const guardrailAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const agent = agentFor(session, {
      guardrails: {
        input: () => {
          asked();
          return new Promise(() => {});
        },
      },
    });

    const run = agent.run('Hello');
    const events = collect(run);
    await guardrailAsked;
    const abortedAt = performance.now();
    run.abort();
    const result = await run.result;

    // The guardrail never settles: a run that waited for it would never end at all; the
    // bound only has to be below the test's timeout, with room for a busy machine.
    expect(performance.now() - abortedAt).toBeLessThan(2_000);
    expect(result.reason).toBe('aborted');
    expect((await events).map((event) => event.type)).toEqual(['run-start', 'run-finish']);
    expect(await session.requests()).toHaveLength(0);
    expect(await agent.memory.getConversation(agent.conversationId)).toBeUndefined();
  });
});
