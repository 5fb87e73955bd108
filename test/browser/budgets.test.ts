import { type AgentEvent, isAirlockError, toolFromFunction } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { estimateMessageTokens, estimateTextTokens } from '../../src/model/estimate-tokens';
import type { ChatMessage } from '../../src/protocol/chat';
import { agentFor, collect, readToolOutput, receivedBodies, scriptModel } from './support';

/** A tool that counts how often it really ran. */
function countingTool() {
  const counter = { runs: 0 };
  const lookup = toolFromFunction(
    function lookup({ query }: { query: string }) {
      counter.runs++;
      return { query, hits: counter.runs };
    },
    {
      description: 'Looks something up.',
      parameters: z.object({ query: z.string().describe('What to look up') }),
    },
  );
  return { lookup, counter };
}

/** A model that asks for `lookup` in every turn. */
const keepsLooking = (
  turns: number,
  usage?: { prompt_tokens: number; completion_tokens: number },
) =>
  Array.from({ length: turns }, (_, index) => ({
    toolCalls: [{ id: `call_${index + 1}`, name: 'lookup', arguments: { query: `q${index + 1}` } }],
    ...(usage ? { usage } : {}),
  }));

async function failure(result: Promise<unknown>) {
  try {
    await result;
  } catch (error) {
    return error as { code: string; details: Record<string, unknown> };
  }
  throw new Error('The run did not fail.');
}

const types = (events: readonly AgentEvent[]) => events.map((event) => event.type);

describe('budgets', () => {
  it('ends the run with budget-exceeded after exactly 3 tool executions under a 3-call tool budget', async () => {
    const session = await scriptModel(keepsLooking(6));
    const { lookup, counter } = countingTool();
    const agent = agentFor(session, {
      tools: [lookup],
      budgets: { run: { toolCalls: 3 } },
      memory: { tools: false },
    });

    const run = agent.run('Look everything up');
    const events = await collect(run);
    const error = await failure(run.result);

    expect(counter.runs).toBe(3);
    expect(isAirlockError(error, 'budget-exceeded')).toBe(true);
    expect(error.details).toEqual({ budget: 'toolCalls', scope: 'run', limit: 3, used: 3 });
    // The fourth response asked for a fourth call: it was refused, its step saved, then the run ended.
    expect(await session.requests()).toHaveLength(4);
    const results = events.flatMap((event) =>
      event.type === 'tool-result' ? [event.ok ? 'ok' : event.error.code] : [],
    );
    expect(results).toEqual(['ok', 'ok', 'ok', 'tool-budget-exceeded']);
    expect(types(events).slice(-2)).toEqual(['step-finish', 'run-error']);

    const stored = await agent.memory.getConversation(agent.conversationId);
    const messages = stored?.messages.map((record) => record.message) ?? [];
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      ...Array.from({ length: 4 }, () => ['assistant', 'tool']).flat(),
    ]);
    const last = messages.at(-1);
    expect(JSON.parse(readToolOutput(last?.content as string | undefined).body).error.code).toBe(
      'tool-budget-exceeded',
    );
    const [record] = await agent.memory.listRuns({ conversationId: agent.conversationId });
    expect(record).toMatchObject({ status: 'failed', usage: { modelCalls: 4, toolCalls: 3 } });
  });

  it('ends the run after the step whose usage crosses a token budget, with that step saved', async () => {
    const session = await scriptModel(
      keepsLooking(5, { prompt_tokens: 100, completion_tokens: 50 }),
    );
    const { lookup, counter } = countingTool();
    const agent = agentFor(session, {
      tools: [lookup],
      budgets: { run: { totalTokens: 400 } },
      memory: { tools: false },
    });

    const run = agent.run('Look everything up');
    const events = await collect(run);
    const error = await failure(run.result);

    // 150, 300, then 450 crosses 400: the third step completes (its tool runs) and is the last.
    expect(error.details).toEqual({ budget: 'totalTokens', scope: 'run', limit: 400, used: 450 });
    expect(await session.requests()).toHaveLength(3);
    expect(counter.runs).toBe(3);
    const finished = events.flatMap((event) => (event.type === 'step-finish' ? [event] : []));
    expect(finished.map((event) => event.usage.totalTokens)).toEqual([150, 150, 150]);
    expect(types(events).at(-1)).toBe('run-error');
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((record) => record.message.role)).toEqual([
      'user',
      ...Array.from({ length: 3 }, () => ['assistant', 'tool']).flat(),
    ]);
    const [record] = await agent.memory.listRuns({ conversationId: agent.conversationId });
    expect(record?.usage).toMatchObject({ modelCalls: 3, totalTokens: 450, promptTokens: 300 });
  });

  it('prices each call, adds up the cost per conversation across runs, and refuses the run that would go over', async () => {
    const usage = { prompt_tokens: 100, completion_tokens: 50 };
    const session = await scriptModel([
      { text: 'First answer.', usage },
      { text: 'Second answer.', usage },
      { text: 'Never sent.', usage },
    ]);
    const agent = agentFor(session, {
      prices: { 'airlock-test-model': { promptPerMillion: 1_000, completionPerMillion: 2_000 } },
      budgets: { conversation: { cost: 0.3 } },
      memory: { tools: false },
    });

    const first = agent.run('One');
    const firstEvents = await collect(first);
    const firstResult = await first.result;
    const second = await agent.run('Two').result;
    const third = agent.run('Three');
    const thirdEvents = await collect(third);
    const error = await failure(third.result);

    // 100 × 1 000 / 1M + 50 × 2 000 / 1M = 0.2 a call.
    const stepFinish = firstEvents.find((event) => event.type === 'step-finish');
    expect(stepFinish && 'cost' in stepFinish ? stepFinish.cost : undefined).toBeCloseTo(0.2);
    expect(firstResult.cost).toBeCloseTo(0.2);
    expect(second.cost).toBeCloseTo(0.2);
    expect(error.code).toBe('budget-exceeded');
    expect(error.details).toMatchObject({ budget: 'cost', scope: 'conversation', limit: 0.3 });
    expect(error.details.used).toBeCloseTo(0.4);
    expect(types(thirdEvents)).toEqual(['run-start', 'run-error']);
    expect(await session.requests()).toHaveLength(2);
    const total = await agent.memory.conversationUsage(agent.conversationId);
    expect(total).toMatchObject({ modelCalls: 2, promptTokens: 200, completionTokens: 100 });
    expect(total.cost).toBeCloseTo(0.4);
  });

  it('estimates usage when the server reports none, and stores it with the run', async () => {
    const session = await scriptModel([
      { text: 'An answer of forty characters, exactly!!', usage: null },
    ]);
    const agent = agentFor(session, { memory: { tools: false } });

    const result = await agent.run('Hi').result;

    const [body] = await receivedBodies(session);
    const sent = (body?.messages ?? []) as ChatMessage[];
    const promptTokens = sent.reduce((sum, message) => sum + estimateMessageTokens(message), 0);
    const completionTokens = estimateTextTokens('An answer of forty characters, exactly!!');
    expect(promptTokens).toBeGreaterThan(0);
    expect(result.usage).toEqual({
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
      estimated: true,
    });
    const [record] = await agent.memory.listRuns({ conversationId: agent.conversationId });
    expect(record?.usage).toMatchObject({ modelCalls: 1, completionTokens, estimated: true });
  });

  it('estimates usage when the server reports negative token counts, which would hand budget back', async () => {
    const session = await scriptModel([
      ...keepsLooking(2, { prompt_tokens: -1_000_000, completion_tokens: 5 }),
      { text: 'Done.', usage: { prompt_tokens: -1_000_000, completion_tokens: 5 } },
    ]);
    const { lookup } = countingTool();
    const agent = agentFor(session, {
      tools: [lookup],
      budgets: { run: { totalTokens: 1_000 } },
      memory: { tools: false },
    });

    const result = await agent.run('Look everything up').result;

    for (const step of result.steps) {
      expect(step.usage.estimated).toBe(true);
      expect(step.usage.promptTokens).toBeGreaterThan(0);
    }
    const [record] = await agent.memory.listRuns({ conversationId: agent.conversationId });
    expect(record?.usage).toMatchObject({ modelCalls: 3, estimated: true });
    expect(record?.usage?.totalTokens).toBeGreaterThan(0);
  });
});

describe("side calls in the conversation's budget", () => {
  const usage = { prompt_tokens: 100, completion_tokens: 50 };
  // 100 × 1 000 / 1M + 50 × 2 000 / 1M = 0.2 a call.
  const prices = { 'airlock-test-model': { promptPerMillion: 1_000, completionPerMillion: 2_000 } };
  const noChanges = JSON.stringify({ changes: [] });

  it("counts the memory extractor's call in the conversation's usage and budget, apart from the run's", async () => {
    const session = await scriptModel([
      { text: 'First answer.', usage },
      { text: noChanges, usage }, // the extractor
      { text: 'Never sent.', usage },
    ]);
    const agent = agentFor(session, {
      prices,
      budgets: { run: { modelCalls: 1 }, conversation: { cost: 0.3 } },
      memory: { tools: false, learn: { model: {} } },
    });

    const firstRun = agent.run('One');
    const first = await firstRun.result;
    const second = agent.run('Two');
    const error = await failure(second.result);

    // The run's own figures stay the loop's: the extractor's call is reported apart.
    expect(first.usage).toMatchObject({ promptTokens: 100, totalTokens: 150 });
    expect(first.cost).toBeCloseTo(0.2);
    expect(first.learning).toMatchObject({ promptTokens: 100, completionTokens: 50 });
    const runs = await agent.memory.listRuns({ conversationId: agent.conversationId });
    const record = runs.find((stored) => stored.id === firstRun.runId);
    expect(record?.usage).toMatchObject({ modelCalls: 1, totalTokens: 150 });
    expect(record?.sideUsage).toMatchObject({ modelCalls: 1, totalTokens: 150 });
    expect(record?.sideUsage?.cost).toBeCloseTo(0.2);
    const total = await agent.memory.conversationUsage(agent.conversationId);
    expect(total).toMatchObject({ modelCalls: 2, totalTokens: 300 });
    expect(total.cost).toBeCloseTo(0.4);
    // 0.2 of the answer alone would have let the second run through.
    expect(error.code).toBe('budget-exceeded');
    expect(error.details).toMatchObject({ budget: 'cost', scope: 'conversation', limit: 0.3 });
    expect(error.details.used).toBeCloseTo(0.4);
    expect(await session.requests()).toHaveLength(2);
  });

  it("skips the extractor with learning-skipped once the answer has spent the conversation's budget", async () => {
    const session = await scriptModel([
      { text: 'The answer.', usage },
      { text: noChanges, usage }, // never asked for
    ]);
    const agent = agentFor(session, {
      prices,
      budgets: { conversation: { cost: 0.2 } },
      memory: { tools: false, learn: { model: {} } },
    });

    const run = agent.run('One');
    const events = await collect(run);
    const result = await run.result;

    expect(result).toMatchObject({ reason: 'stop', text: 'The answer.' });
    expect(result.learning).toBeUndefined();
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'warning',
        code: 'learning-skipped',
        message: expect.stringContaining("conversation's cost budget is spent"),
      }),
    );
    expect(await session.requests()).toHaveLength(1);
    const [record] = await agent.memory.listRuns({ conversationId: agent.conversationId });
    expect(record?.sideUsage).toBeUndefined();
  });

  it("counts the history summary's call, and makes none once the conversation's budget is spent", async () => {
    const session = await scriptModel([
      { text: 'Answer one.', usage },
      { text: 'Answer two.', usage },
      { text: 'The user asked two questions.', usage }, // the summary
      { text: 'Answer three.', usage },
      { text: 'Never sent.', usage },
    ]);
    const agent = agentFor(session, {
      prices,
      budgets: { conversation: { modelCalls: 4 } },
      memory: { tools: false, window: { maxMessages: 4 } },
    });
    await agent.run('Question one').result;
    await agent.run('Question two').result;
    const third = await agent.run('Question three').result;
    const fourth = agent.run('Question four');
    const fourthEvents = await collect(fourth);
    const error = await failure(fourth.result);

    expect(third.usage).toMatchObject({ promptTokens: 100, totalTokens: 150 });
    const runs = await agent.memory.listRuns({ conversationId: agent.conversationId });
    const summarised = runs.find((record) => record.sideUsage);
    expect(summarised?.sideUsage).toMatchObject({ modelCalls: 1, totalTokens: 150 });
    expect(summarised?.sideUsage?.cost).toBeCloseTo(0.2);
    expect(await agent.memory.conversationUsage(agent.conversationId)).toMatchObject({
      modelCalls: 4,
    });
    // The fourth run would summarise again; the budget refuses it before any request.
    expect(error.code).toBe('budget-exceeded');
    expect(error.details).toMatchObject({ budget: 'modelCalls', scope: 'conversation', used: 4 });
    expect(types(fourthEvents)).toEqual(['run-start', 'run-error']);
    expect(fourthEvents).not.toContainEqual(expect.objectContaining({ type: 'warning' }));
    expect(await session.requests()).toHaveLength(4);
  });
});
