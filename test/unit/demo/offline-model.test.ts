// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { offlineModel } from '../../../demo/model/offline-model';
import { knowledgeMessage } from '../../../src/knowledge/knowledge-message';
import { formatToolOutput } from '../../../src/worker/tools/tool-message';
import { ask, asReply, okToolMessage, requestWith } from './offline-requests';

const BOTH_TOOLS = ['get_weather', 'calculate'];

describe('the offline demo model', () => {
  it('quotes the best knowledge passage Airlock put in the request, naming its document', () => {
    const knowledge = knowledgeMessage([
      {
        docId: 'notes',
        title: 'Tom & Jerry "notes"',
        chunkIndex: 0,
        score: 0.5,
        text: 'The lighthouse is kept by Orla.',
      },
    ]);
    const reply = asReply(
      offlineModel(
        requestWith([
          { role: 'system', content: 'Use the <knowledge> passages.' },
          knowledge,
          { role: 'user', content: 'Who keeps the lighthouse?' },
        ]),
        0,
      ),
    );

    expect(reply.text).toBe(
      'From your document “Tom & Jerry "notes"”: The lighthouse is kept by Orla.',
    );
  });

  it('calls get_weather once with the city when asked about the weather in one city', () => {
    const reply = ask('What is the weather in Paris?', BOTH_TOOLS, 3);

    expect(reply.text).toBeUndefined();
    expect(reply.toolCalls).toEqual([
      { id: 'call_0_3_0', name: 'get_weather', arguments: { city: 'Paris' } },
    ]);
  });

  it('makes one parallel get_weather call per city when cities are joined by "and"', () => {
    const reply = ask('What is the weather in Paris and Oslo?', BOTH_TOOLS, 7);

    expect(reply.toolCalls).toEqual([
      { id: 'call_0_7_0', name: 'get_weather', arguments: { city: 'Paris' } },
      { id: 'call_0_7_1', name: 'get_weather', arguments: { city: 'Oslo' } },
    ]);
  });

  it('finds cities written in lower case or without "in", and ignores filler words', () => {
    expect(ask('how warm is it in new york today?').toolCalls?.[0]?.arguments).toEqual({
      city: 'New York',
    });
    expect(ask('Tokyo weather?').toolCalls?.[0]?.arguments).toEqual({ city: 'Tokyo' });
    expect(ask('Temperature for Lyon, Nice and Lille at the moment').toolCalls).toHaveLength(3);
  });

  it('asks which city when a weather question names none', () => {
    const reply = ask("what's the weather like?");

    expect(reply.toolCalls).toBeUndefined();
    expect(reply.text).toMatch(/Which city\?/);
  });

  it('calls calculate with the expression found in an arithmetic question', () => {
    expect(ask('what is (2+3)*4').toolCalls).toEqual([
      { id: 'call_0_0_0', name: 'calculate', arguments: { expression: '(2+3)*4' } },
    ]);
    expect(ask('What is 2 + 2?').toolCalls?.[0]?.arguments).toEqual({ expression: '2 + 2' });
    expect(ask('calculate 12.5.').toolCalls?.[0]?.arguments).toEqual({ expression: '12.5' });
  });

  it('answers in text summarising every tool result of the latest batch, in call order', () => {
    const turn = offlineModel(
      requestWith([
        { role: 'user', content: 'What is the weather in Paris and Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'a',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            {
              id: 'b',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
            },
          ],
        },
        okToolMessage('get_weather', 'a', { city: 'Paris', temperatureC: 18, sky: 'clear' }),
        okToolMessage('get_weather', 'b', { city: 'Oslo', temperatureC: 4, sky: 'windy' }),
      ]),
      1,
    );
    const reply = asReply(turn);

    expect(reply.toolCalls).toBeUndefined();
    expect(reply.text).toBe(
      'In Paris it is 18 °C and clear. In Oslo it is 4 °C and windy. (Invented demo data, not a real forecast.)',
    );
    // Streamed word by word with a pause, so the page shows it arriving.
    expect(reply.chunkDelayMs).toBeGreaterThan(0);
  });

  it('reports a tool error from the results instead of inventing an answer', () => {
    const turn = offlineModel(
      requestWith([
        { role: 'user', content: 'calculate 1/0' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'c',
              type: 'function',
              function: { name: 'calculate', arguments: '{"expression":"1/0"}' },
            },
          ],
        },
        {
          role: 'tool',
          tool_call_id: 'c',
          content: formatToolOutput('calculate', 'c', {
            ok: false,
            error: {
              code: 'tool-failed',
              message: 'Tool "calculate" failed: Division by zero in "1/0".',
            },
          }),
        },
      ]),
      1,
    );

    expect(asReply(turn).text).toBe('I could not calculate 1/0: Division by zero in "1/0".');
  });

  it('also reads bare tool output, as clients other than Airlock send it', () => {
    const turn = offlineModel(
      requestWith([
        { role: 'user', content: 'what is 6*7' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'd',
              type: 'function',
              function: { name: 'calculate', arguments: '{"expression":"6*7"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'd', content: '{"expression":"6*7","result":42}' },
      ]),
      1,
    );

    expect(asReply(turn).text).toBe('6*7 = 42.');
  });

  it('explains what it is and what it can do when the question is neither weather nor arithmetic', () => {
    const reply = ask('Tell me a joke');

    expect(reply.toolCalls).toBeUndefined();
    expect(reply.text).toMatch(/offline demo model/);
    expect(reply.text).toMatch(/the weather/);
    expect(reply.text).toMatch(/arithmetic/);
  });

  it('calls no tool that the request does not offer', () => {
    const weather = ask('What is the weather in Paris?', ['calculate']);
    const arithmetic = ask('what is 2+2', []);

    expect(weather.toolCalls).toBeUndefined();
    expect(weather.text).toMatch(/does not offer it/);
    expect(arithmetic.toolCalls).toBeUndefined();
    expect(arithmetic.text).toMatch(/does not offer it/);
  });

  it('answers an unreadable request body with an HTTP 400', () => {
    const request = { ...requestWith([]), body: 'not json' };

    expect(offlineModel(request, 0)).toMatchObject({ status: 400 });
  });
});

describe('the offline demo model with the code tool', () => {
  it('writes a script for run_js that looks each city up and compares them, ', async () => {
    const reply = ask('Which is warmest: Paris, Oslo or Bergen?', ['get_weather', 'run_js'], 1);
    const call = reply.toolCalls?.[0];
    const code = String((call?.arguments as { code?: unknown } | undefined)?.code);

    expect(call?.name).toBe('run_js');
    expect(code).toContain('const cities = ["Paris","Oslo","Bergen"];');
    expect(code).toContain('await tools.get_weather({ city })');
    // The script is valid JavaScript as the body of an async function.
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
    const weather = (city: string) => ({ city, temperatureC: city.length });
    const run = new AsyncFunction('tools', 'console', code);
    const result = await run(
      { get_weather: ({ city }: { city: string }) => weather(city) },
      {
        log: () => {},
      },
    );
    expect(result).toEqual({ warmest: 'Bergen', coldest: 'Oslo', averageC: 5 });
  });
});
