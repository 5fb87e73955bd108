import { tool } from 'airlock-agents';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  agentOver,
  collect,
  MODEL_APIS,
  readToolOutput,
  receivedBodies,
  scriptModel,
} from './support';

describe.each(MODEL_APIS)('tool failures are data for the model, over %s', (api) => {
  const agentFor = agentOver(api);

  it('tells the model about an unknown tool, bad JSON, invalid arguments and a throwing tool, then completes', async () => {
    const runs = { weather: 0, explode: 0 };
    const weather = tool({
      name: 'get_weather',
      description: 'Current weather for a city.',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        runs.weather++;
        return `sunny in ${city}`;
      },
    });
    const explode = tool({
      name: 'explode',
      description: 'Always fails.',
      parameters: z.object({}),
      execute: () => {
        runs.explode++;
        throw new Error('the fuse was wet');
      },
    });
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_unknown', name: 'launch_rockets', arguments: { count: 3 } },
          { id: 'call_json', name: 'get_weather', arguments: '<city>Paris</city>' },
          { id: 'call_schema', name: 'get_weather', arguments: { city: 42 } },
          { id: 'call_throw', name: 'explode', arguments: {} },
        ],
      },
      { text: 'I could not do any of that.' },
    ]);
    const agent = agentFor(session, { tools: [weather, explode] });
    const run = agent.run('Try everything');

    const events = await collect(run);
    const result = await run.result;

    expect(result).toMatchObject({ reason: 'stop', text: 'I could not do any of that.' });
    expect(runs).toEqual({ weather: 0, explode: 1 });
    const failures = events.flatMap((event) =>
      event.type === 'tool-result' && !event.ok ? [[event.callId, event.error.code]] : [],
    );
    expect(failures).toEqual(
      expect.arrayContaining([
        ['call_unknown', 'tool-not-found'],
        ['call_json', 'tool-invalid-json'],
        ['call_schema', 'tool-invalid-arguments'],
        ['call_throw', 'tool-failed'],
      ]),
    );
    const badJsonCall = events.find(
      (event) => event.type === 'tool-call' && event.callId === 'call_json',
    );
    expect(badJsonCall).toMatchObject({ argumentsText: '<city>Paris</city>' });
    expect(badJsonCall && 'arguments' in badJsonCall).toBe(false);

    const toolMessages = (await receivedBodies(session))[1]?.messages.filter(
      (message) => message.role === 'tool',
    );
    const errors = Object.fromEntries(
      (toolMessages ?? []).map((message) => [
        message.tool_call_id,
        JSON.parse(readToolOutput(message.content).body).error,
      ]),
    );
    expect(errors.call_unknown).toMatchObject({ code: 'tool-not-found' });
    expect(errors.call_unknown.message).toContain('get_weather, explode');
    expect(errors.call_json).toMatchObject({ code: 'tool-invalid-json' });
    expect(errors.call_schema.code).toBe('tool-invalid-arguments');
    expect(errors.call_schema.message).toMatch(/city: .*expected string/i);
    expect(errors.call_throw).toEqual({
      code: 'tool-failed',
      message: 'Tool "explode" failed: the fuse was wet',
    });
  });

  it('mends arguments a model left unclosed or unquoted, says so, and streams them parsed as they grow', async () => {
    const cities: string[] = [];
    const weather = tool({
      name: 'get_weather',
      description: 'Current weather for a city.',
      parameters: z.object({ city: z.string(), days: z.array(z.int()) }),
      execute: ({ city, days }) => {
        cities.push(`${city}:${days.join(',')}`);
        return `sunny in ${city}`;
      },
    });
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_open', name: 'get_weather', arguments: '{"city": "Paris", "days": [1, 2' },
          { id: 'call_bare', name: 'get_weather', arguments: "{city: 'Oslo', days: [3,],}" },
          {
            id: 'call_long',
            name: 'get_weather',
            arguments: { city: 'Reykjavík'.repeat(20), days: [1, 2, 3, 4, 5, 6, 7] },
          },
        ],
        argumentChunks: 12,
      },
      { text: 'Sunny everywhere.' },
    ]);
    const agent = agentFor(session, { tools: [weather], memory: { tools: false } });

    const events = await collect(agent.run('Weather?'));

    expect(cities.sort()).toEqual([
      'Oslo:3',
      'Paris:1,2',
      `${'Reykjavík'.repeat(20)}:1,2,3,4,5,6,7`,
    ]);
    const calls = Object.fromEntries(
      events.flatMap((event) => (event.type === 'tool-call' ? [[event.callId, event]] : [])),
    );
    expect(calls.call_open).toMatchObject({
      arguments: { city: 'Paris', days: [1, 2] },
      argumentsRepaired: true,
    });
    expect(calls.call_bare).toMatchObject({ arguments: { city: 'Oslo', days: [3] } });
    expect(calls.call_bare?.argumentsRepaired).toBe(true);
    expect(calls.call_long && 'argumentsRepaired' in calls.call_long).toBe(false);

    // The long call's arguments arrive in twelve pieces; the partial value grows with them.
    const partials = events.flatMap((event) =>
      event.type === 'tool-call-delta' &&
      event.callId === 'call_long' &&
      'partialArguments' in event
        ? [event.partialArguments as { city?: string; days?: number[] }]
        : [],
    );
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.length).toBeLessThan(12);
    const cityLengths = partials.map((partial) => partial.city?.length ?? 0);
    expect(cityLengths).toEqual([...cityLengths].sort((a, b) => a - b));
    expect(cityLengths.at(-1)).toBeGreaterThan(cityLengths[0] ?? 0);
  });

  it('reports a tool output that JSON cannot represent, and a thrown string, without failing the run', async () => {
    const strange = tool({
      name: 'strange',
      description: 'Returns odd things.',
      parameters: z.object({ kind: z.enum(['function', 'bigint', 'string-throw']) }),
      execute: ({ kind }) => {
        if (kind === 'function') return () => 1;
        if (kind === 'bigint') return { big: 10n };
        throw 'plain string';
      },
    });
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_fn', name: 'strange', arguments: { kind: 'function' } },
          { id: 'call_big', name: 'strange', arguments: { kind: 'bigint' } },
          { id: 'call_str', name: 'strange', arguments: { kind: 'string-throw' } },
        ],
      },
      { text: 'Noted.' },
    ]);
    const agent = agentFor(session, { tools: [strange] });

    const events = await collect(agent.run('Be strange'));

    const codes = Object.fromEntries(
      events.flatMap((event) =>
        event.type === 'tool-result' && !event.ok ? [[event.callId, event.error]] : [],
      ),
    );
    expect(codes.call_fn?.code).toBe('tool-output-not-serializable');
    expect(codes.call_big?.code).toBe('tool-output-not-serializable');
    expect(codes.call_str).toEqual({
      code: 'tool-failed',
      message: 'Tool "strange" failed: plain string',
    });
    expect(events.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop', text: 'Noted.' });
  });

  it('cancels a running page tool through its signal when the run is aborted', async () => {
    let started = false;
    let sawAbort = false;
    const slow = tool({
      name: 'slow',
      description: 'Waits until cancelled.',
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          started = true;
          signal.addEventListener('abort', () => {
            sawAbort = true;
            reject(new Error('cancelled'));
          });
        }),
    });
    const session = await scriptModel([
      { toolCalls: [{ name: 'slow', arguments: {} }] },
      { text: 'unused' },
    ]);
    const agent = agentFor(session, { tools: [slow] });
    const run = agent.run('Go slow');

    for await (const event of run) {
      if (event.type !== 'tool-call') continue;
      await vi.waitUntil(() => started);
      run.abort();
    }
    const result = await run.result;

    expect(result.reason).toBe('aborted');
    expect(sawAbort).toBe(true);
    expect(result.steps[0]?.toolCalls).toEqual([
      { callId: expect.any(String), toolName: 'slow', ok: false },
    ]);
    expect(await session.requests()).toHaveLength(1);
  });
});
