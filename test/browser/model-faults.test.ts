import { type AgentEvent, AirlockError, isAirlockError, tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentOver, collect, MODEL_APIS, receivedBodies, scriptModel } from './support';

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

/**
 * A cut reply four times over: a step the network cut is asked for again up to three times,
 * so the fourth cut ends the run as a cut stream did before those restarts.
 */
function cutEveryTime<T>(turn: T): T[] {
  return [turn, turn, turn, turn];
}

/** The text of the step's last attempt: deltas before a `step-restarted` were void. */
function lastAttemptText(events: AgentEvent[]): string {
  const restartAt = events.findLastIndex((event) => event.type === 'step-restarted');
  return events
    .slice(restartAt + 1)
    .flatMap((event) => (event.type === 'text-delta' ? [event.delta] : []))
    .join('');
}

async function runError(events: AgentEvent[]) {
  const last = events.at(-1);
  expect(last?.type).toBe('run-error');
  return last?.type === 'run-error' ? last.error : undefined;
}

describe.each(MODEL_APIS)('model faults, over %s', (api) => {
  const agentFor = agentOver(api);

  it('retries a 429, waiting as long as Retry-After says, then completes', async () => {
    const session = await scriptModel([
      { status: 429, retryAfterSeconds: 1 },
      { text: 'Made it.' },
    ]);
    const agent = agentFor(session);

    const result = await agent.run('Hello').result;

    expect(result).toMatchObject({ reason: 'stop', text: 'Made it.' });
    const [limited, retried] = await session.requests();
    // The SDK sleeps the full second; the margin is for the first request's own trip.
    expect(retried!.receivedAt - limited!.receivedAt).toBeGreaterThanOrEqual(850);
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
    const session = await scriptModel(
      cutEveryTime({
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
        argumentChunks: 4,
        // Slow enough that the call's start reaches the page before the reset (WebKit drops
        // what it had buffered and not handed over).
        chunkDelayMs: 250,
        fault: { kind: 'cut', afterChunks: 3 },
      }),
    );
    const agent = agentFor(session, { tools: [countingWeather] });
    const events = await collect(agent.run('Weather?'));

    expect((await runError(events))?.code).toBe('model-stream-truncated');
    expect(events.some((event) => event.type === 'tool-call-start')).toBe(true);
    expect(events.some((event) => event.type === 'tool-call')).toBe(false);
    expect(counter.runs).toBe(0);
    expect(await session.requests()).toHaveLength(4);
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

  it('fails model-stream-idle without a retry when a stream stalls after its text was shown, and closes the connection', async () => {
    const session = await scriptModel([
      { text: 'Hello there friend', fault: { kind: 'stall', afterChunks: 2 } },
      { text: 'A retry would repeat the greeting.' },
    ]);
    const agent = agentFor(session, { limits: { streamIdleTimeoutMs: 300 } });

    const events = await collect(agent.run('Hi'));
    const error = await runError(events);

    expect(error).toMatchObject({
      code: 'model-stream-idle',
      details: { timeoutMs: 300, receivedChars: 'Hello'.length },
    });
    const shown = events.flatMap((event) => (event.type === 'text-delta' ? [event.delta] : []));
    expect(shown.join('')).toBe('Hello');
    await session.waitUntil((requests) => requests[0]?.closedByClient === true);
    expect(await session.requests()).toHaveLength(1);
  });

  it('retries once a stream that stalls before any text or tool call, and completes', async () => {
    const session = await scriptModel([
      { text: 'Never shown.', fault: { kind: 'stall', afterChunks: 1 } },
      { text: 'Recovered.' },
    ]);
    const agent = agentFor(session, { limits: { streamIdleTimeoutMs: 300 } });

    const events = await collect(agent.run('Hi'));

    expect(events.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop', text: 'Recovered.' });
    const shown = events.flatMap((event) => (event.type === 'text-delta' ? [event.delta] : []));
    expect(shown.join('')).toBe('Recovered.');
    const requests = await session.waitUntil((log) => log[0]?.closedByClient === true);
    expect(requests).toHaveLength(2);
  });

  it('fails model-stream-idle after one retry when the retried stream stalls too, and never hangs', async () => {
    const session = await scriptModel([
      // After the role chunk, which shows nothing. (A server that sends headers and no chunk
      // at all is a different fault in Firefox, whose fetch settles only with the first
      // bytes of the body: there `model.requestTimeoutMs` ends the wait, not the idle timeout.)
      { text: 'Never shown.', fault: { kind: 'stall', afterChunks: 1 } },
      { text: 'Never shown.', fault: { kind: 'stall', afterChunks: 1 } },
      { text: 'A third request is one too many.' },
    ]);
    const agent = agentFor(session, { limits: { streamIdleTimeoutMs: 300 } });

    const error = await runError(await collect(agent.run('Hi')));

    expect(error).toMatchObject({
      code: 'model-stream-idle',
      details: { timeoutMs: 300, attempts: 2, receivedChars: 0 },
    });
    expect(await session.requests()).toHaveLength(2);
  });

  it('does not retry a stall once a tool call has started streaming', async () => {
    const { counter, countingWeather } = countingTool();
    const session = await scriptModel([
      {
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
        fault: { kind: 'stall', afterChunks: 2 },
      },
      { text: 'never' },
    ]);
    const agent = agentFor(session, {
      tools: [countingWeather],
      limits: { streamIdleTimeoutMs: 300 },
    });

    const error = await runError(await collect(agent.run('Weather?')));

    expect(error).toMatchObject({ code: 'model-stream-idle', details: { pendingToolCalls: 1 } });
    expect(counter.runs).toBe(0);
    expect(await session.requests()).toHaveLength(1);
  });

  it('keeps the text of a cut stream as interrupted, never replays it, and says how much arrived', async () => {
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      ...cutEveryTime({
        text: 'The answer begins here and then',
        chunkDelayMs: 50,
        fault: { kind: 'cut', afterChunks: 4 } as const,
      }),
      { text: 'Fresh.' },
    ]);
    const agent = agentFor(session, { conversationId, memory: { tools: false } });

    const events = await collect(agent.run('Question'));
    const error = await runError(events);

    // A browser drops bytes it had buffered but not handed over when the connection fails,
    // so the last word may be lost; what was shown (by the last attempt) is what is kept and counted.
    const shown = lastAttemptText(events);
    expect(['The answer', 'The answer begins']).toContain(shown);
    expect(error).toMatchObject({
      code: 'model-stream-truncated',
      details: { receivedChars: shown.length, pendingToolCalls: 0 },
    });
    const stored = await agent.memory.getConversation(conversationId);
    expect(stored?.messages.map((row) => [row.message.content, row.status])).toEqual([
      ['Question', 'complete'],
      [shown, 'interrupted'],
    ]);
    const [run] = await agent.memory.listRuns({ conversationId });
    expect(run?.status).toBe('failed');

    await agent.run('Again').result;
    const next = (await receivedBodies(session))[4];
    expect(next?.messages.filter((message) => message.role !== 'system')).toEqual([
      { role: 'user', content: 'Question' },
      { role: 'user', content: 'Again' },
    ]);
  });

  it('leaves a run whose connection keeps dropping mid-run resumable: every completed step is kept and sent again', async () => {
    const { counter, countingWeather } = countingTool();
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } }] },
      ...cutEveryTime({ text: 'It is sunny in', fault: { kind: 'cut', afterChunks: 3 } as const }),
      { text: 'Sunny in Paris.' },
    ]);
    const agent = agentFor(session, {
      conversationId,
      tools: [countingWeather],
      memory: { tools: false },
    });

    const error = await agent.run('Weather in Paris?').result.catch((thrown: unknown) => thrown);
    expect(isAirlockError(error, 'model-stream-truncated')).toBe(true);
    const result = await agent.run('Go on.').result;

    expect(result.text).toBe('Sunny in Paris.');
    expect(counter.runs).toBe(1);
    const resumed = (await receivedBodies(session))[5];
    expect(
      resumed?.messages
        .filter((message) => message.role !== 'system')
        .map((message) => [
          message.role,
          message.tool_calls?.[0]?.id ?? message.tool_call_id ?? message.content,
        ]),
    ).toEqual([
      ['user', 'Weather in Paris?'],
      ['assistant', 'call_paris'],
      ['tool', 'call_paris'],
      ['user', 'Go on.'],
    ]);
  });

  it('waits at most model.maxRetryAfterMs for a 429: Retry-After 120 fails model-rate-limited at once with the server wait', async () => {
    const session = await scriptModel([{ status: 429, retryAfterSeconds: 120 }, { text: 'never' }]);
    const agent = agentFor(session);
    const started = performance.now();

    const error = await runError(await collect(agent.run('Hello')));

    expect(error).toMatchObject({
      code: 'model-rate-limited',
      details: { status: 429, retryAfterMs: 120_000, maxRetryAfterMs: 30_000 },
    });
    // Far below the two minutes the server asked for.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await session.requests()).toHaveLength(1);
  });

  it('reports a 429 that outlasts the retries as model-rate-limited', async () => {
    const session = await scriptModel([
      { status: 429, retryAfterSeconds: 0 },
      { status: 429, retryAfterSeconds: 0 },
      { status: 429, retryAfterSeconds: 0 },
    ]);
    const agent = agentFor(session);

    const error = await runError(await collect(agent.run('Hello')));

    expect(error).toMatchObject({ code: 'model-rate-limited', details: { status: 429 } });
    expect(await session.requests()).toHaveLength(3);
  });

  it.each([401, 403])(
    'fails a %i at once as model-auth, pointing at the proxy and never quoting a key',
    async (status) => {
      const session = await scriptModel([
        {
          status,
          message:
            'Incorrect API key provided: sk-proj-****************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.',
        },
        { text: 'never' },
      ]);
      const agent = agentFor(session);

      const error = await runError(await collect(agent.run('Hello')));

      expect(error).toMatchObject({ code: 'model-auth', details: { status } });
      expect(error?.message).toMatch(/proxy/);
      // The key's tail is no hex: the endpoint's URL in the message holds a hex session id,
      // which once began with "abcd".
      expect(error?.message).not.toMatch(/sk-|wxyz|api key/i);
      expect(await session.requests()).toHaveLength(1);
    },
  );

  it('fails a request the browser refuses by CORS as model-unreachable, naming CORS and the headers the proxy must allow', async () => {
    const session = await scriptModel([{ text: 'never' }], { allowedHeaders: ['content-type'] });
    const agent = agentFor(session, { model: { maxRetries: 0 } });

    const error = await runError(await collect(agent.run('Hello')));

    expect(error?.code).toBe('model-unreachable');
    expect(error?.message).toMatch(/CORS/);
    expect(error?.message).toMatch(/x-stainless-\*/);
    expect(error?.message).toMatch(/authorization/);
    expect(await session.requests()).toHaveLength(0);
  });

  it('fails a 502 with an HTML body as model-http-error with a short excerpt of the body', async () => {
    const page = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><p>The upstream server did not answer.</p>${'<!-- padding -->'.repeat(400)}</body></html>`;
    const session = await scriptModel([{ status: 502, body: page }]);
    const agent = agentFor(session, { model: { maxRetries: 0 } });

    const error = await runError(await collect(agent.run('Hello')));

    expect(error).toMatchObject({ code: 'model-http-error', details: { status: 502 } });
    expect(error?.message).toContain('502 Bad Gateway');
    expect(error?.message).not.toContain('<');
    expect(error?.message.length).toBeLessThan(400);
  });

  it("keeps the conversation, the failed turn's input included, usable after a failed run", async () => {
    const session = await scriptModel([{ text: 'First.' }, { status: 503 }, { text: 'Third.' }]);
    const agent = agentFor(session, { memory: { tools: false }, model: { maxRetries: 0 } });
    await agent.run('One').result;
    await expect(agent.run('Two').result).rejects.toMatchObject({ code: 'model-http-error' });

    expect((await agent.run('Three').result).text).toBe('Third.');
    const third = (await receivedBodies(session))[2];
    const replayed = (third?.messages ?? []).filter((message) => message.role !== 'system');
    expect(replayed.map((message) => message.content)).toEqual(['One', 'First.', 'Two', 'Three']);
  });

  it('keeps the conversation usable after a refused turn, which is never sent again', async () => {
    const session = await scriptModel([{ text: 'First.' }, { status: 400 }, { text: 'Third.' }]);
    const agent = agentFor(session, { memory: { tools: false } });
    await agent.run('One').result;
    await expect(agent.run('Two').result).rejects.toMatchObject({
      code: 'input-refused',
      details: { status: 400, refusedBy: 'model-http-error' },
    });

    expect((await agent.run('Three').result).text).toBe('Third.');
    const third = (await receivedBodies(session))[2];
    const replayed = (third?.messages ?? []).filter((message) => message.role !== 'system');
    expect(replayed.map((message) => message.content)).toEqual(['One', 'First.', 'Three']);
  });
});
