import { type AgentEvent, tool } from 'airlock-agents';
import { loadChatMessages } from 'airlock-agents/ai-sdk';
import type { ScriptedReply } from 'airlock-agents/testing/remote';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentOver, collect, MODEL_APIS, receivedBodies, scriptModel } from './support';

// The fake server's `cut` fault destroys the socket mid-body: every engine's fetch then
// fails the body's read with a network TypeError, as a dropped connection does.
const TEST_TIMEOUT_MS = 60_000;

function countingWeather() {
  const counter = { runs: 0 };
  const weather = tool({
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      counter.runs++;
      return `sunny in ${city}`;
    },
  });
  return { counter, weather };
}

/** The text a page shows by the events: each step's deltas, a restarted step's dropped. */
function shownText(events: readonly AgentEvent[]): string {
  const byStep = new Map<number, string>();
  for (const event of events) {
    if (event.type === 'text-delta')
      byStep.set(event.step, (byStep.get(event.step) ?? '') + event.delta);
    if (event.type === 'step-restarted') byStep.delete(event.step);
  }
  return [...byStep.values()].join('');
}

const restarts = (events: readonly AgentEvent[]) =>
  events.filter((event) => event.type === 'step-restarted');

/**
 * A reply the network cuts after three chunks, sent slowly enough for the page to see some:
 * an engine drops what it had buffered and not handed over when the connection resets
 * (WebKit did, with 30 ms between chunks).
 */
const cutReply = (reply: ScriptedReply): ScriptedReply => ({
  chunkDelayMs: 250,
  ...reply,
  fault: { kind: 'cut', afterChunks: 3 },
});

describe.each(MODEL_APIS)('a stream the network cuts, over %s', (api) => {
  const agentFor = agentOver(api);

  it(
    'asks for the step again once, with the same messages, and the page drops the void partial text',
    async () => {
      const conversationId = crypto.randomUUID();
      const session = await scriptModel([
        cutReply({ text: 'The answer begins here and then goes on' }),
        { text: 'The whole answer.' },
      ]);
      const agent = agentFor(session, { conversationId, memory: { tools: false } });

      const run = agent.run('Question');
      const events = await collect(run);
      const result = await run.result;

      expect(result.text).toBe('The whole answer.');
      expect(restarts(events)).toEqual([
        { type: 'step-restarted', step: 1, reason: 'connection-lost', restart: 1 },
      ]);
      const restartAt = events.findIndex((event) => event.type === 'step-restarted');
      // Some of the cut answer reached the page before the restart said it was void.
      expect(events.slice(0, restartAt).some((event) => event.type === 'text-delta')).toBe(true);
      expect(shownText(events)).toBe('The whole answer.');
      expect(events.filter((event) => event.type === 'step-start')).toHaveLength(1);

      const bodies = await receivedBodies(session);
      expect(bodies).toHaveLength(2);
      expect(bodies[1]?.messages).toEqual(bodies[0]?.messages);

      // Nothing of the void attempt is stored or loaded back.
      const stored = await agent.memory.getConversation(conversationId);
      expect(stored?.messages.map((row) => [row.message.content, row.status])).toEqual([
        ['Question', 'complete'],
        ['The whole answer.', 'complete'],
      ]);
      const loaded = await loadChatMessages(agent, conversationId);
      expect(JSON.stringify(loaded)).not.toContain('begins here');
      expect((await agent.memory.listRuns({ conversationId }))[0]?.status).toBe('finished');
    },
    TEST_TIMEOUT_MS,
  );
});

describe('a stream the network cuts', () => {
  const agentFor = agentOver('chat');

  it(
    'never runs a tool call whose arguments were cut, and runs the call streamed again once',
    async () => {
      const { counter, weather } = countingWeather();
      const call = { id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } };
      const session = await scriptModel([
        cutReply({ toolCalls: [call], argumentChunks: 4 }),
        { toolCalls: [call], argumentChunks: 4 },
        { text: 'Sunny in Paris.' },
      ]);
      const agent = agentFor(session, { tools: [weather] });

      const run = agent.run('Weather in Paris?');
      const events = await collect(run);
      const result = await run.result;

      expect(result.text).toBe('Sunny in Paris.');
      expect(counter.runs).toBe(1);
      const restartAt = events.findIndex((event) => event.type === 'step-restarted');
      expect(events.slice(0, restartAt).map((event) => event.type)).toContain('tool-call-start');
      expect(events.filter((event) => event.type === 'tool-call')).toHaveLength(1);
      expect(restarts(events)).toHaveLength(1);
      // The call streamed again keeps the model's id: the void attempt's id is not held against it.
      expect(
        events.find((event) => event.type === 'tool-call' && event.callId === 'call_paris'),
      ).toBeDefined();
      const bodies = await receivedBodies(session);
      expect(bodies).toHaveLength(3);
      expect(bodies[1]?.messages).toEqual(bodies[0]?.messages);
      const audit = await agent.memory.toolCalls({ runId: result.runId });
      expect(audit.map((row) => [row.toolName, row.outcome])).toEqual([['get_weather', 'ok']]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'fails model-stream-truncated once one step was cut four times, keeping only the last attempt as interrupted',
    async () => {
      const conversationId = crypto.randomUUID();
      const cut = cutReply({ text: 'Never quite an answer to this' });
      const session = await scriptModel([cut, cut, cut, cut, { text: 'never asked' }]);
      const agent = agentFor(session, { conversationId, memory: { tools: false } });

      const events = await collect(agent.run('Question'));

      expect(
        restarts(events).map((event) => event.type === 'step-restarted' && event.restart),
      ).toEqual([1, 2, 3]);
      expect(events.at(-1)).toMatchObject({
        type: 'run-error',
        error: { code: 'model-stream-truncated', details: { connectionLost: true } },
      });
      expect(await session.requests()).toHaveLength(4);
      const stored = await agent.memory.getConversation(conversationId);
      expect(stored?.messages.map((row) => [row.message.content, row.status])).toEqual([
        ['Question', 'complete'],
        [shownText(events), 'interrupted'],
      ]);
      expect(shownText(events)).toContain('Never');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'bounds the restarts of a whole run: the seventh fails even in a step of its own',
    async () => {
      const { counter, weather } = countingWeather();
      const call = { name: 'get_weather', arguments: { city: 'Oslo' } };
      const cut = cutReply({ text: 'Cut off before the' });
      const session = await scriptModel([
        cut,
        cut,
        cut,
        { toolCalls: [call] },
        cut,
        cut,
        cut,
        { toolCalls: [{ ...call, arguments: { city: 'Rome' } }] },
        cut,
        { text: 'never asked' },
      ]);
      const agent = agentFor(session, { tools: [weather] });

      const events = await collect(agent.run('Weather in Oslo and Rome?'));

      expect(
        restarts(events).map((event) => event.type === 'step-restarted' && event.step),
      ).toEqual([1, 1, 1, 2, 2, 2]);
      expect(events.at(-1)).toMatchObject({
        type: 'run-error',
        error: { code: 'model-stream-truncated', details: { connectionLost: true } },
      });
      expect(counter.runs).toBe(2);
      expect(await session.requests()).toHaveLength(9);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'keeps garbage, a stream without finish_reason, silence and 500s as they were: no step asked again',
    async () => {
      const cases: Array<{ turn: Parameters<typeof scriptModel>[0][number]; code: string }> = [
        {
          turn: { text: 'Some words then', fault: { kind: 'malformed', afterChunks: 2 } },
          code: 'model-stream-malformed',
        },
        {
          turn: { text: 'All of it but the end', finishReason: null },
          code: 'model-stream-truncated',
        },
        {
          turn: { text: 'Words then silence', fault: { kind: 'stall', afterChunks: 2 } },
          code: 'model-stream-idle',
        },
      ];
      for (const { turn, code } of cases) {
        const session = await scriptModel([turn, { text: 'never asked' }]);
        const agent = agentFor(session, { limits: { streamIdleTimeoutMs: 1_500 } });
        const events = await collect(agent.run('Question'));
        expect(restarts(events), code).toEqual([]);
        expect(events.at(-1), code).toMatchObject({ type: 'run-error', error: { code } });
        expect(
          (events.at(-1) as { error: { details?: Record<string, unknown> } }).error.details
            ?.connectionLost,
          code,
        ).toBeUndefined();
        expect(await session.requests(), code).toHaveLength(1);
      }
      const failing = await scriptModel([{ status: 500 }, { status: 500 }, { status: 500 }]);
      const events = await collect(agentFor(failing).run('Question'));
      expect(restarts(events)).toEqual([]);
      expect(events.at(-1)).toMatchObject({
        type: 'run-error',
        error: { code: 'model-http-error' },
      });
      expect(await failing.requests()).toHaveLength(3);
    },
    TEST_TIMEOUT_MS,
  );
});
