import { type AgentEvent, AirlockError, isAirlockError, tool } from 'airlock';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, scriptModel } from './support';

function countingTool() {
  const counter = { runs: 0 };
  const countingWeather = tool({
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: z.object({ city: z.string() }),
    execute: () => {
      counter.runs++;
      return 'sunny';
    },
  });
  return { counter, countingWeather };
}

async function runError(events: AgentEvent[]) {
  const last = events.at(-1);
  expect(last?.type).toBe('run-error');
  return last?.type === 'run-error' ? last.error : undefined;
}

describe('model faults', () => {
  it('retries a 429, waiting as long as Retry-After says, then completes', async () => {
    const session = await scriptModel([
      { status: 429, retryAfterSeconds: 1 },
      { text: 'Made it.' },
    ]);
    const agent = agentFor(session);

    const result = await agent.run('Hello').result;

    expect(result).toMatchObject({ reason: 'stop', text: 'Made it.' });
    const [limited, retried] = await session.requests();
    expect(retried!.receivedAt - limited!.receivedAt).toBeGreaterThanOrEqual(950);
  });

  it('reports model-http-error with the status after three 500s', async () => {
    const session = await scriptModel([
      { status: 500 },
      { status: 500 },
      { status: 500 },
      { text: 'never' },
    ]);
    const agent = agentFor(session);
    const run = agent.run('Hello');

    const error = await runError(await collect(run));
    const rejection = await run.result.catch((thrown: unknown) => thrown);

    expect(error).toMatchObject({ code: 'model-http-error', details: { status: 500 } });
    expect(rejection).toBeInstanceOf(AirlockError);
    expect(isAirlockError(rejection, 'model-http-error')).toBe(true);
    expect(await session.requests()).toHaveLength(3);
  });

  it('never runs a tool from a stream cut in the middle of its arguments', async () => {
    const { counter, countingWeather } = countingTool();
    const session = await scriptModel([
      {
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
        argumentChunks: 4,
        chunkDelayMs: 30,
        fault: { kind: 'cut', afterChunks: 3 },
      },
    ]);
    const agent = agentFor(session, { tools: [countingWeather] });
    const events = await collect(agent.run('Weather?'));

    expect((await runError(events))?.code).toBe('model-stream-truncated');
    expect(events.some((event) => event.type === 'tool-call-start')).toBe(true);
    expect(events.some((event) => event.type === 'tool-call')).toBe(false);
    expect(counter.runs).toBe(0);
  });

  it('never runs a tool from a stream that ends without a finish_reason', async () => {
    const { counter, countingWeather } = countingTool();
    const session = await scriptModel([
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }], finishReason: null },
    ]);
    const agent = agentFor(session, { tools: [countingWeather] });
    const events = await collect(agent.run('Weather?'));

    const error = await runError(events);
    expect(error).toMatchObject({
      code: 'model-stream-truncated',
      details: { pendingToolCalls: 1 },
    });
    expect(counter.runs).toBe(0);
  });

  it('never runs a tool from a response cut at the output token limit', async () => {
    const { counter, countingWeather } = countingTool();
    const session = await scriptModel([
      {
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
        finishReason: 'length',
      },
    ]);
    const agent = agentFor(session, { tools: [countingWeather] });

    expect((await runError(await collect(agent.run('Weather?'))))?.code).toBe(
      'model-output-truncated',
    );
    expect(counter.runs).toBe(0);
  });

  it('reports a chunk that is not JSON as model-stream-malformed', async () => {
    const session = await scriptModel([
      { text: 'Hello there friend', fault: { kind: 'malformed', afterChunks: 2 } },
    ]);
    const agent = agentFor(session);

    const malformedError = await runError(await collect(agent.run('Hi')));
    expect(malformedError?.code).toBe('model-stream-malformed');
  });

  it('times out a stream that stalls after its headers, and closes the connection', async () => {
    const session = await scriptModel([
      { text: 'Hello there friend', fault: { kind: 'stall', afterChunks: 2 } },
    ]);
    const agent = agentFor(session, { limits: { streamIdleTimeoutMs: 300 } });
    const started = performance.now();

    const error = await runError(await collect(agent.run('Hi')));

    expect(error).toMatchObject({ code: 'model-stream-idle-timeout', details: { timeoutMs: 300 } });
    expect(performance.now() - started).toBeLessThan(2_000);
    await session.waitUntil((requests) => requests[0]?.closedByClient === true);
  });

  it("keeps the conversation, the failed turn's input included, usable after a failed run", async () => {
    const session = await scriptModel([{ text: 'First.' }, { status: 400 }, { text: 'Third.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    await agent.run('One').result;
    await expect(agent.run('Two').result).rejects.toMatchObject({ code: 'model-http-error' });

    expect((await agent.run('Three').result).text).toBe('Third.');
    const third = (await session.requests())[2]?.body as {
      messages: Array<{ role: string; content: string }>;
    };
    const replayed = third.messages.filter((message) => message.role !== 'system');
    expect(replayed.map((message) => message.content)).toEqual(['One', 'First.', 'Two', 'Three']);
  });
});
