import { type AgentEvent, tool } from 'airlock-agents';
import type { RemoteModelSession } from 'airlock-agents/testing/remote';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, readToolOutput, receivedBodies, scriptModel } from './support';

function weatherTool(calls: string[]) {
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

const answer = 'Paris is 18 °C and Oslo is 11 °C, both clear.';

/** The event types of a run, with repeats in a row folded (deltas come in any number). */
function shape(events: readonly AgentEvent[]): string[] {
  return events
    .map((event) => event.type)
    .filter((type, index, types) => type !== types[index - 1]);
}

/** An agent with the weather tool, calling tools by fenced blocks; `cities` lists its calls. */
function promptedWeatherAgent(session: RemoteModelSession) {
  const cities: string[] = [];
  const agent = agentFor(session, {
    tools: [weatherTool(cities)],
    memory: { tools: false },
    model: { toolCalling: 'prompted' },
  });
  return { agent, cities };
}

/** A fenced block as a model prompted for tools writes it. */
const block = (tool: string, args: unknown) =>
  `\`\`\`json\n${JSON.stringify({ tool, arguments: args })}\n\`\`\``;

describe('prompted tool calling, for endpoints without function calling', () => {
  it('completes the weather conversation against a server that rejects tools, with the event sequence of native calling', async () => {
    const native = await scriptModel([
      {
        toolCalls: [
          { id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } },
          { id: 'call_oslo', name: 'get_weather', arguments: { city: 'Oslo' } },
        ],
      },
      { text: answer },
    ]);
    const prompted = await scriptModel(
      [
        {
          text: `${block('get_weather', { city: 'Paris' })}\n${block('get_weather', { city: 'Oslo' })}`,
        },
        { text: answer },
      ],
      { rejectTools: true },
    );
    const nativeCities: string[] = [];
    const promptedCities: string[] = [];
    const nativeAgent = agentFor(native, {
      tools: [weatherTool(nativeCities)],
      instructions: 'Be brief.',
      memory: { tools: false },
    });
    const promptedAgent = agentFor(prompted, {
      tools: [weatherTool(promptedCities)],
      instructions: 'Be brief.',
      memory: { tools: false },
      model: { toolCalling: 'prompted' },
    });

    const nativeRun = nativeAgent.run('Weather in Paris and Oslo?');
    const nativeEvents = await collect(nativeRun);
    const promptedRun = promptedAgent.run('Weather in Paris and Oslo?');
    const promptedEvents = await collect(promptedRun);
    const result = await promptedRun.result;

    expect(shape(nativeEvents)).toEqual([
      'run-start',
      'step-start',
      'tool-call-start',
      'tool-call-delta',
      'tool-call-start',
      'tool-call-delta',
      'tool-call',
      'tool-result',
      'step-finish',
      'step-start',
      'text-delta',
      'step-finish',
      'run-finish',
    ]);
    expect(shape(promptedEvents)).toEqual(shape(nativeEvents));
    expect(result).toMatchObject({ reason: 'stop', text: answer });
    expect(promptedCities.sort()).toEqual(['Oslo', 'Paris']);
    const calls = promptedEvents.flatMap((event) =>
      event.type === 'tool-call' ? [[event.toolName, event.arguments]] : [],
    );
    expect(calls).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_weather', { city: 'Oslo' }],
    ]);
    expect(promptedEvents.some((event) => event.type === 'text-delta' && event.step === 1)).toBe(
      false,
    );
    expect(result.steps[0]?.finishReason).toBe('tool_calls');

    const requests = await prompted.requests();
    expect(requests.map((request) => request.turnIndex)).toEqual([0, 1]);
    const [first, second] = await receivedBodies(prompted);
    expect(first?.tools).toBeUndefined();
    expect(first?.messages[0]?.content).toMatch(/^Be brief\.\n\nTool results arrive/);
    expect(first?.messages[0]?.content).toContain('## get_weather\nCurrent weather for a city.');
    expect(first?.messages[0]?.content).toContain('"description":"City name"');
    expect(second?.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
    expect(second?.messages[2]?.content).toBe(
      `${block('get_weather', { city: 'Paris' })}\n\n${block('get_weather', { city: 'Oslo' })}`,
    );
    const results = (second?.messages[3]?.content ?? '').split('\n\n').map(readToolOutput);
    expect(
      results.map((output) => [output.tool, output.status, JSON.parse(output.body).city]),
    ).toEqual([
      ['get_weather', 'ok', 'Paris'],
      ['get_weather', 'ok', 'Oslo'],
    ]);
  });

  it('mends a block whose braces were left open, and runs its call', async () => {
    const session = await scriptModel(
      [
        { text: '```json\n{"tool": "get_weather", "arguments": {"city": "Paris"\n```' },
        { text: 'Paris is 18 °C.' },
      ],
      { rejectTools: true },
    );
    const { agent, cities } = promptedWeatherAgent(session);

    const events = await collect(agent.run('Weather in Paris?'));

    expect(cities).toEqual(['Paris']);
    expect(events.find((event) => event.type === 'tool-call')).toMatchObject({
      toolName: 'get_weather',
      arguments: { city: 'Paris' },
      argumentsRepaired: true,
    });
  });

  it('answers a block that cannot be mended with tool-invalid-json, and the model can correct itself', async () => {
    const session = await scriptModel(
      [
        { text: '```json\n{"tool": "get_weather", "arguments": <city>Paris</city>\n```' },
        { text: block('get_weather', { city: 'Paris' }) },
        { text: 'Paris is 18 °C.' },
      ],
      { rejectTools: true },
    );
    const { agent, cities } = promptedWeatherAgent(session);

    const run = agent.run('Weather in Paris?');
    const events = await collect(run);
    const result = await run.result;

    expect(result.text).toBe('Paris is 18 °C.');
    expect(cities).toEqual(['Paris']);
    const outcomes = events.flatMap((event) =>
      event.type === 'tool-result' ? [event.ok ? 'ok' : event.error.code] : [],
    );
    expect(outcomes).toEqual(['tool-invalid-json', 'ok']);
    const second = (await receivedBodies(session))[1];
    const told = readToolOutput(second?.messages.at(-1)?.content);
    expect(JSON.parse(told.body).error.code).toBe('tool-invalid-json');
  });
});
