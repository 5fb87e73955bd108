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
