import { createAgent, isAirlockError, tool } from 'airlock-agents';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { collect, WORKER_START_MS } from './support';

function weather(cities: string[]) {
  return tool({
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: z.object({ city: z.string(), offered: z.string().optional() }),
    execute: ({ city }) => {
      cities.push(city);
      return { city, sky: 'sunny' };
    },
  });
}

/** An agent whose worker serves its own model: no endpoint at all. */
function agentWithOwnModel(model: string, options: { prompted?: boolean; tools?: never[] } = {}) {
  const cities: string[] = [];
  const agent = createAgent({
    worker: () =>
      new Worker(new URL('./fixtures/custom-model.worker.ts', import.meta.url), { type: 'module' }),
    model: { model, ...(options.prompted ? { toolCalling: 'prompted' as const } : {}) },
    tools: [weather(cities)],
    memory: { database: `custom-model-${crypto.randomUUID()}`, tools: false },
    startTimeoutMs: WORKER_START_MS,
  });
  onTestFinished(() => agent.dispose());
  return { agent, cities };
}

describe('a model of the app’s own, served by the agent worker', () => {
  it('drives a full tool-calling run: streamed call, tool on the page, final answer, stored', async () => {
    const { agent, cities } = agentWithOwnModel('native-weather');

    const run = agent.run('Weather in Paris?');
    const events = await collect(run);
    const result = await run.result;

    expect(events[0]).toMatchObject({ type: 'run-start', model: 'in-browser/native-weather' });
    expect(events.filter((event) => event.type === 'tool-call-delta')).toHaveLength(2);
    expect(events.find((event) => event.type === 'tool-call')).toMatchObject({
      callId: 'call_w',
      arguments: { city: 'Paris', offered: 'get_weather' },
    });
    expect(cities).toEqual(['Paris']);
    expect(result).toMatchObject({ reason: 'stop', usage: { totalTokens: 30 } });
    expect(result.text).toContain('The tool said: ');
    expect(result.text).toContain('sunny');
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.messages.map((record) => record.message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('is wrapped by prompted tool calling when the page asks for it', async () => {
    const { agent, cities } = agentWithOwnModel('prompted-weather', { prompted: true });

    const result = await agent.run('Weather in Oslo?').result;

    expect(cities).toEqual(['Oslo']);
    expect(result.text).toBe('Prompted answer after the tool.');
  });

  it('fails the run with a typed error when it streams a part the loop does not know', async () => {
    const { agent } = agentWithOwnModel('malformed');

    const events = await collect(agent.run('Hi'));

    expect(events.at(-1)).toMatchObject({
      type: 'run-error',
      error: { code: 'model-stream-malformed' },
    });
  });

  it('fails the run with model-failed, its message kept, when it throws', async () => {
    const { agent } = agentWithOwnModel('throwing');

    const events = await collect(agent.run('Hi'));

    expect(events.at(-1)).toMatchObject({
      type: 'run-error',
      error: { code: 'model-failed', message: expect.stringContaining('the engine is not loaded') },
    });
  });

  it('fails ready when the model cannot be made, and knowledge says it has no embeddings', async () => {
    const { agent: broken } = agentWithOwnModel('no-such-behaviour');
    const failure = await broken.ready.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isAirlockError(failure) && failure.code).toBe('invalid-options');

    const { agent } = agentWithOwnModel('native-weather');
    await agent.ready;
    const added = await agent.knowledge.add({ id: 'd', title: 'Doc', text: 'Some text.' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(added).toMatchObject({ code: 'invalid-options', details: { field: 'model.baseURL' } });
  });

  it('is not assumed when the worker has none: the endpoint is then required', async () => {
    const agent = createAgent({
      worker: () =>
        new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), { type: 'module' }),
      model: { model: 'airlock-test-model' },
      memory: { database: `no-endpoint-${crypto.randomUUID()}` },
      startTimeoutMs: WORKER_START_MS,
    });
    onTestFinished(() => agent.dispose());
    const failure = await agent.ready.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'invalid-options', details: { field: 'model.baseURL' } });
  });
});
