import { type AgentEvent, isAirlockError, tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentFor,
  agentOver,
  collect,
  readToolOutput,
  receivedBodies,
  scriptModel,
} from './support';

/** A body as the server received it, with the request fields these tests look at. */
type Body = Record<string, unknown> & Awaited<ReturnType<typeof receivedBodies>>[number];

async function bodies(session: Parameters<typeof receivedBodies>[0]): Promise<Body[]> {
  return (await receivedBodies(session)) as Body[];
}

function lookupTool(calls: string[] = [], needsApproval = false) {
  return tool({
    name: 'lookup',
    description: 'Looks a word up.',
    parameters: z.object({ word: z.string() }),
    needsApproval,
    execute: async ({ word }) => {
      calls.push(word);
      return { word, meaning: `the meaning of ${word}` };
    },
  });
}

function runErrorOf(events: readonly AgentEvent[]) {
  return events.find((event) => event.type === 'run-error');
}

describe('model options', () => {
  it('sends the agent’s request fields with every call, Airlock’s own fields untouched', async () => {
    const session = await scriptModel([{ text: 'One.' }, { text: 'Two.' }]);
    const agent = agentFor(session, {
      model: {
        options: {
          temperature: 0.5,
          max_completion_tokens: 300,
          seed: 7,
          stop: ['END'],
          top_p: 0.9,
          parallel_tool_calls: false,
          user: 'user-42',
          extra: { top_k: 40, min_p: 0.05 },
        },
      },
      tools: [lookupTool()],
    });

    await agent.run('Hi').result;
    await agent.run('Again').result;

    for (const body of await bodies(session)) {
      expect(body).toMatchObject({
        model: 'airlock-test-model',
        temperature: 0.5,
        max_completion_tokens: 300,
        seed: 7,
        stop: ['END'],
        top_p: 0.9,
        parallel_tool_calls: false,
        user: 'user-42',
        top_k: 40,
        min_p: 0.05,
        stream: true,
        stream_options: { include_usage: true },
      });
      expect(body).not.toHaveProperty('extra');
    }
  });

  it('lets a run change the model, its fields and the instructions, for that run alone', async () => {
    const session = await scriptModel([{ text: 'One.' }, { text: 'Two.' }]);
    const agent = agentFor(session, {
      instructions: 'Agent instructions.',
      model: { options: { temperature: 0.2, seed: 7, max_completion_tokens: 300 } },
      memory: { tools: false },
    });

    const events = await collect(
      agent.run('Hi', {
        model: 'another-model',
        modelOptions: { seed: 8, temperature: 1.1, extra: { top_k: 5 } },
        instructions: 'Run instructions.',
      }),
    );
    await agent.run('Again').result;

    expect(events[0]).toMatchObject({ type: 'run-start', model: 'another-model' });
    const [first, second] = await bodies(session);
    expect(first).toMatchObject({
      model: 'another-model',
      seed: 8,
      temperature: 1.1,
      max_completion_tokens: 300,
      top_k: 5,
    });
    expect(first?.messages[0]).toEqual({ role: 'system', content: 'Run instructions.' });
    expect(second).toMatchObject({ model: 'airlock-test-model', seed: 7, temperature: 0.2 });
    expect(second).not.toHaveProperty('top_k');
    expect(second?.messages[0]).toEqual({ role: 'system', content: 'Agent instructions.' });
  });

  it('refuses an unknown field, a wrong value and a field Airlock sets, naming each', async () => {
    const session = await scriptModel([]);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ maxTokens: 5 }, 'model.options.maxTokens'],
      [{ temperature: 9 }, 'model.options.temperature'],
      [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'model.options.stop'],
      [{ seed: 1.5 }, 'model.options.seed'],
      [{ service_tier: 'fastest' }, 'model.options.service_tier'],
      [{ extra: { model: 'other' } }, 'model.options.extra.model'],
      [{ extra: { stream: false } }, 'model.options.extra.stream'],
      [{ extra: { messages: [] } }, 'model.options.extra.messages'],
      [{ extra: { seed: 3 } }, 'model.options.extra.seed'],
      [{ extra: { big: 'x'.repeat(20_000) } }, 'model.options.extra'],
    ];
    for (const [options, field] of cases) {
      const agent = agentFor(session, { model: { options } });
      const error = await agent.ready.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(isAirlockError(error) && error.code, field).toBe('invalid-options');
      expect(isAirlockError(error) && error.details, field).toMatchObject({ field });
    }
    expect(await session.requests()).toEqual([]);
  });

  it('fails a run whose own options are wrong before anything is sent or stored', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session);
    await agent.ready;

    const events = await collect(agent.run('Hi', { modelOptions: { top_p: 3 } }));

    expect(runErrorOf(events)?.error).toMatchObject({
      code: 'invalid-options',
      details: { field: 'modelOptions.top_p' },
    });
    await expect(
      agent.run('Hi', { modelOptions: { extra: { f: () => 1 } } as never }).result,
    ).rejects.toMatchObject({ code: 'invalid-options' });
    await expect(agent.run('Hi', { model: '  ' }).result).rejects.toMatchObject({
      code: 'invalid-options',
      details: { field: 'options.model' },
    });
    expect(await session.requests()).toEqual([]);
    expect(await agent.memory.getConversation(agent.conversationId)).toBeUndefined();
  });

  it('refuses a run model with no price when a cost budget is set', async () => {
    const session = await scriptModel([{ text: 'never sent' }]);
    const agent = agentFor(session, {
      budgets: { run: { cost: 1 } },
      prices: { 'airlock-test-model': { promptPerMillion: 1, completionPerMillion: 1 } },
    });

    const events = await collect(agent.run('Hi', { model: 'unpriced-model' }));

    expect(runErrorOf(events)?.error).toMatchObject({
      code: 'invalid-options',
      message: expect.stringContaining('unpriced-model'),
    });
    expect(await session.requests()).toEqual([]);
    expect(await agent.memory.getConversation(agent.conversationId)).toBeUndefined();
  });
});

describe('model options over the Responses API', () => {
  it('sends them under that API’s names, the run’s over the agent’s', async () => {
    const session = await scriptModel([{ text: 'One.' }]);
    const agent = agentOver('responses')(session, {
      model: {
        options: {
          temperature: 0.3,
          reasoning_effort: 'low',
          max_completion_tokens: 300,
          verbosity: 'low',
          extra: { top_k: 5 },
        },
      },
      memory: { tools: false },
    });

    await agent.run('Hi', { modelOptions: { reasoning_effort: 'high', user: 'user-7' } }).result;

    const [request] = await session.requests();
    expect(request?.path).toMatch(/\/responses$/);
    expect(request?.body).toMatchObject({
      temperature: 0.3,
      max_output_tokens: 300,
      user: 'user-7',
      top_k: 5,
      reasoning: { effort: 'high' },
      text: { verbosity: 'low' },
      store: false,
    });
    expect(request?.body).not.toHaveProperty('max_completion_tokens');
    expect(request?.body).not.toHaveProperty('reasoning_effort');
  });

  it('fails a run with a Chat Completions field that API lacks, naming it, and sends nothing', async () => {
    const session = await scriptModel([{ text: 'Never sent.' }]);
    const agent = agentOver('responses')(session, { memory: { tools: false } });

    const events = await collect(agent.run('Hi', { modelOptions: { seed: 7 } }));

    expect(runErrorOf(events)).toMatchObject({
      error: { code: 'invalid-options', details: { field: 'model.options.seed' } },
    });
    expect(await session.requests()).toHaveLength(0);
  });
});

describe('a run’s own tools', () => {
  it('are offered and run on the page in that run, and not in the next', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { word: 'airlock' } }] },
      { text: 'Found it.' },
      { text: 'No tools now.' },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });
    const calls: string[] = [];

    const events = await collect(agent.run('Define airlock', { tools: [lookupTool(calls)] }));
    await agent.run('And now?').result;

    expect(calls).toEqual(['airlock']);
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({
      toolName: 'lookup',
      ok: true,
      output: { word: 'airlock', meaning: 'the meaning of airlock' },
    });
    const [first, second, third] = await bodies(session);
    expect(first?.tools?.map((entry) => entry.function.name)).toEqual(['lookup']);
    expect(readToolOutput(second?.messages.at(-1)?.content).body).toContain(
      'the meaning of airlock',
    );
    expect(third?.tools).toBeUndefined();
    const [audit] = await agent.memory.toolCalls({ conversationId: agent.conversationId });
    expect(audit).toMatchObject({ toolName: 'lookup', outcome: 'ok' });
  });

  it('ask for approval like any tool, and answer only to the run’s allowlist', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { word: 'gate' } }] },
      { text: 'Done.' },
      { text: 'Without it.' },
    ]);
    const agent = agentFor(session, {
      tools: [
        tool({
          name: 'agent_tool',
          description: 'The agent’s own.',
          parameters: z.object({}),
          execute: () => 'ok',
        }),
      ],
      allowedTools: ['agent_tool'],
      memory: { tools: false },
    });
    const calls: string[] = [];

    const run = agent.run('Define gate', { tools: [lookupTool(calls, true)] });
    const seen: string[] = [];
    for await (const event of run) {
      seen.push(event.type);
      if (event.type === 'approval-request') {
        expect(calls).toEqual([]);
        await run.approve(event.approvalId);
      }
    }
    await agent.run('Again', { tools: [lookupTool(calls)], allowedTools: ['agent_tool'] }).result;

    expect(seen).toContain('approval-request');
    expect(calls).toEqual(['gate']);
    const [first, , third] = await bodies(session);
    // Offered beside the agent's tools though the agent's allowlist does not name it...
    expect(first?.tools?.map((entry) => entry.function.name).sort()).toEqual([
      'agent_tool',
      'lookup',
    ]);
    // ...and left out when the run's own allowlist does not.
    expect(third?.tools?.map((entry) => entry.function.name)).toEqual(['agent_tool']);
  });

  it('may not take the name of an agent tool', async () => {
    const session = await scriptModel([{ text: 'never sent' }]);
    const agent = agentFor(session, { tools: [lookupTool()], memory: { tools: false } });

    const events = await collect(agent.run('Hi', { tools: [lookupTool()] }));

    expect(runErrorOf(events)?.error).toMatchObject({
      code: 'invalid-options',
      message: expect.stringContaining('"lookup"'),
    });
    const builtIn = await collect(
      agent.run('Hi', {
        tools: [
          tool({
            name: 'forget_memory',
            description: 'x',
            parameters: z.object({}),
            execute: () => 1,
          }),
        ],
      }),
    );
    expect(runErrorOf(builtIn)?.error.code).toBe('invalid-options');
    await expect(
      agent.run('Hi', { tools: [lookupTool(), lookupTool()] }).result,
    ).rejects.toMatchObject({ code: 'invalid-options', details: { field: 'options.tools' } });
    expect(await session.requests()).toEqual([]);
    // Refused before anything was written: not even the conversation exists.
    expect(await agent.memory.getConversation(agent.conversationId)).toBeUndefined();
  });
});
