import { tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentOver,
  collect,
  MODEL_APIS,
  readToolOutput,
  receivedBodies,
  scriptModel,
} from './support';

function weatherTool(calls: string[] = []) {
  return tool({
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: z.object({ city: z.string().describe('City name') }),
    execute: async ({ city }) => {
      calls.push(city);
      return { city, temperatureC: city === 'Paris' ? 18 : 11, sky: 'clear' };
    },
  });
}

describe.each(MODEL_APIS)('the agent loop in a worker, over %s', (api) => {
  const agentFor = agentOver(api);

  it('runs two parallel tool calls and streams the final answer to the page in order', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } },
          { id: 'call_oslo', name: 'get_weather', arguments: { city: 'Oslo' } },
        ],
      },
      { text: 'Paris is 18 °C and Oslo is 11 °C, both clear.' },
    ]);
    const cities: string[] = [];
    const agent = agentFor(session, { tools: [weatherTool(cities)], instructions: 'Be brief.' });

    const run = agent.run('Weather in Paris and Oslo?');
    const events = await collect(run);
    const result = await run.result;

    const types = events.map((event) => event.type);
    expect(types[0]).toBe('run-start');
    expect(types.at(-1)).toBe('run-finish');
    // Step 1 streams both calls, then completes them, then reports both results, then finishes.
    const step1 = events
      .filter((event) => 'step' in event && event.step === 1)
      .map((event) => event.type);
    expect(step1.indexOf('tool-call-start')).toBeLessThan(step1.indexOf('tool-call-delta'));
    expect(step1.lastIndexOf('tool-call-delta')).toBeLessThan(step1.indexOf('tool-call'));
    expect(step1.lastIndexOf('tool-call')).toBeLessThan(step1.indexOf('tool-result'));
    expect(step1.at(-1)).toBe('step-finish');
    const completed = events.filter((event) => event.type === 'tool-call');
    expect(completed.map((event) => [event.callId, event.arguments])).toEqual([
      ['call_paris', { city: 'Paris' }],
      ['call_oslo', { city: 'Oslo' }],
    ]);
    expect(cities.sort()).toEqual(['Oslo', 'Paris']);

    const text = events
      .flatMap((event) => (event.type === 'text-delta' ? [event.delta] : []))
      .join('');
    expect(text).toBe('Paris is 18 °C and Oslo is 11 °C, both clear.');
    expect(result).toMatchObject({ reason: 'stop', text, runId: run.runId });
    expect(result.steps).toHaveLength(2);
    expect(result.usage.totalTokens).toBe(
      result.steps.reduce((sum, step) => sum + step.usage.totalTokens, 0),
    );
    expect(result.usage.totalTokens).toBeGreaterThan(0);

    const [first, second] = await receivedBodies(session);
    expect(first?.stream).toBe(true);
    const [raw] = await session.requests();
    if (api === 'chat') {
      expect(raw?.path).toMatch(/\/chat\/completions$/);
      expect(raw?.body).toMatchObject({ stream_options: { include_usage: true } });
    } else {
      expect(raw?.path).toMatch(/\/responses$/);
      expect(raw?.body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    }
    expect(first?.messages).toEqual([
      {
        role: 'system',
        content: expect.stringMatching(/^Be brief\.\n\nTool results arrive inside <tool_output>/),
      },
      { role: 'user', content: 'Weather in Paris and Oslo?' },
    ]);
    expect(first?.tools?.[0]?.function.parameters).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string', description: 'City name' } },
      required: ['city'],
    });
    const replay = second?.messages.slice(2);
    expect(replay?.map((message) => message.role)).toEqual(['assistant', 'tool', 'tool']);
    expect(
      replay?.[0]?.tool_calls?.map((call) => [
        call.id,
        call.function.name,
        JSON.parse(call.function.arguments),
      ]),
    ).toEqual([
      ['call_paris', 'get_weather', { city: 'Paris' }],
      ['call_oslo', 'get_weather', { city: 'Oslo' }],
    ]);
    expect(replay?.slice(1).map((message) => message.tool_call_id)).toEqual([
      'call_paris',
      'call_oslo',
    ]);
    const parisOutput = readToolOutput(replay?.[1]?.content);
    expect(parisOutput).toMatchObject({ tool: 'get_weather', callId: 'call_paris', status: 'ok' });
    expect(JSON.parse(parisOutput.body)).toEqual({
      city: 'Paris',
      temperatureC: 18,
      sky: 'clear',
    });
  });

  it('streams reasoning as reasoning-delta events, keeps it with the step, and never replays it as content', async () => {
    const session = await scriptModel([
      {
        reasoning: 'The user wants Paris; call the tool.',
        toolCalls: [{ id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } }],
      },
      { reasoning: 'Now answer.', text: 'Sunny, 18 °C.' },
      { text: 'You asked about Paris.' },
    ]);
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const agent = agentFor(session, {
      tools: [weatherTool()],
      conversationId,
      memory: { database },
    });

    const run = agent.run('Weather in Paris?');
    const events = await collect(run);
    const result = await run.result;

    const reasoningOf = (step: number) =>
      events
        .flatMap((event) =>
          event.type === 'reasoning-delta' && event.step === step ? [event.delta] : [],
        )
        .join('');
    expect(reasoningOf(1)).toBe('The user wants Paris; call the tool.');
    expect(reasoningOf(2)).toBe('Now answer.');
    // Reasoning streams before the step's text and calls.
    const step2 = events.filter((event) => 'step' in event && event.step === 2);
    expect(step2.findIndex((event) => event.type === 'reasoning-delta')).toBeLessThan(
      step2.findIndex((event) => event.type === 'text-delta'),
    );
    expect(result.text).toBe('Sunny, 18 °C.');
    expect(result.steps.map((step) => step.reasoning)).toEqual([
      'The user wants Paris; call the tool.',
      'Now answer.',
    ]);
    const stored = await agent.memory.getConversation(conversationId);
    const assistants = stored?.messages.filter((row) => row.message.role === 'assistant');
    expect(
      assistants?.map((row) => row.message.role === 'assistant' && row.message.reasoning),
    ).toEqual(['The user wants Paris; call the tool.', 'Now answer.']);

    // A new agent on the same database, as after a reload, continues the conversation.
    agent.dispose();
    const reloaded = agentFor(session, {
      tools: [weatherTool()],
      conversationId,
      memory: { database },
    });
    await reloaded.run('Which city was it?').result;

    const requests = await session.requests();
    const inputOf = (index: number) =>
      (requests[index]?.body as { input?: Array<Record<string, unknown>> } | undefined)?.input ??
      [];
    const sentBack = (index: number) => inputOf(index).filter((item) => item.type === 'reasoning');
    for (const body of await receivedBodies(session))
      expect(JSON.stringify(body.messages)).not.toContain('The user wants Paris');
    if (api === 'responses') {
      const first = {
        type: 'reasoning',
        id: expect.stringMatching(/^rs_/),
        summary: [{ type: 'summary_text', text: 'The user wants Paris; call the tool.' }],
        encrypted_content: `enc:${btoa('The user wants Paris; call the tool.')}`,
      };
      // The API requires a reasoning item sent back before the call it led to.
      const items = inputOf(1);
      expect(items.findIndex((item) => item.type === 'reasoning')).toBe(
        items.findIndex((item) => item.type === 'function_call') - 1,
      );
      expect(sentBack(1)).toEqual([first]);
      // After the reload both steps' items come back from IndexedDB.
      expect(sentBack(2)).toEqual([
        first,
        expect.objectContaining({ encrypted_content: `enc:${btoa('Now answer.')}` }),
      ]);
    } else {
      for (const request of requests.slice(1)) {
        expect(JSON.stringify(request.body)).not.toContain('The user wants Paris');
        expect(JSON.stringify(request.body)).not.toContain('reasoning');
      }
      const replay = (await receivedBodies(session))[2]?.messages ?? [];
      expect(replay.filter((message) => message.role === 'assistant')).toEqual([
        {
          role: 'assistant',
          content: null,
          tool_calls: [expect.objectContaining({ id: 'call_paris' })],
        },
        { role: 'assistant', content: 'Sunny, 18 °C.' },
      ]);
    }
  });

  it('remembers earlier turns of the conversation in the next run', async () => {
    const session = await scriptModel([{ text: 'Hello Ada.' }, { text: 'Your name is Ada.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    await agent.run('My name is Ada.').result;
    const second = await agent.run('What is my name?').result;

    expect(second.text).toBe('Your name is Ada.');
    const bodies = await receivedBodies(session);
    expect(bodies[1]?.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hello Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
  });

  it('ends with max-steps after exactly maxSteps model requests when the model always wants a tool', async () => {
    const alwaysCalls = Array.from({ length: 5 }, (_, index) => ({
      toolCalls: [{ id: `call_${index}`, name: 'get_weather', arguments: { city: 'Paris' } }],
    }));
    const session = await scriptModel(alwaysCalls);
    const agent = agentFor(session, { tools: [weatherTool()], limits: { maxSteps: 3 } });

    const result = await agent.run('Loop forever').result;

    expect(result.reason).toBe('max-steps');
    expect(result.steps).toHaveLength(3);
    expect(await session.requests()).toHaveLength(3);
  });
});
