import { readUIMessageStream, type UIMessageChunk, uiMessageChunkSchema } from 'ai';
import type { AgentEvent } from 'airlock-agents';
import { EventChunkMapper } from 'airlock-agents/ai-sdk';
import { describe, expect, it } from 'vitest';

const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7 };

/** The message the SDK builds from the chunks of `events`, every chunk checked by its schema. */
async function messageOf(events: readonly AgentEvent[]) {
  const mapper = new EventChunkMapper('run-1');
  const chunks: UIMessageChunk[] = [...(mapper.open(false, 'm1') as UIMessageChunk[])];
  for (const event of events) chunks.push(...(mapper.map(event) as UIMessageChunk[]));
  for (const chunk of chunks) {
    const validation = await uiMessageChunkSchema().validate?.(chunk);
    expect(validation?.success, `${chunk.type} fits the SDK's chunk schema`).toBe(true);
  }
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: unknown;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return { chunks, message: last as { parts: { type: string; text?: string; state?: string }[] } };
}

const run: readonly AgentEvent[] = [
  { type: 'run-start', runId: 'run-1', model: 'm' },
  { type: 'step-start', step: 1 },
];
const finish: readonly AgentEvent[] = [
  { type: 'step-finish', step: 1, finishReason: 'stop', usage, durationMs: 5 },
  {
    type: 'run-finish',
    runId: 'run-1',
    conversationId: 'c',
    reason: 'stop',
    text: 'Answer.',
    steps: [],
    usage,
  },
];

describe('the event → UI chunk mapping', () => {
  it('marks a step the network cut with a data-step-restarted part after its void text, and fails its half-written call', async () => {
    const { message } = await messageOf([
      ...run,
      { type: 'text-delta', step: 1, delta: 'Half an ' },
      { type: 'tool-call-start', step: 1, callId: 'call_1', toolName: 'get_weather' },
      { type: 'tool-call-delta', step: 1, callId: 'call_1', argumentsDelta: '{"city":"Pa' },
      { type: 'step-restarted', step: 1, reason: 'connection-lost', restart: 1 },
      { type: 'text-delta', step: 1, delta: 'Answer.' },
      ...finish,
    ]);

    const parts = message.parts as {
      type: string;
      text?: string;
      state?: string;
      data?: unknown;
      errorText?: string;
    }[];
    expect(parts.map((part) => [part.type, part.text ?? part.state])).toEqual([
      ['step-start', undefined],
      ['text', 'Half an '],
      ['tool-get_weather', 'output-error'],
      ['data-step-restarted', undefined],
      ['text', 'Answer.'],
      ['data-step', undefined],
      ['data-usage', undefined],
    ]);
    expect(parts[2]?.errorText).toContain('never run');
    expect(parts[3]?.data).toEqual({ step: 1, reason: 'connection-lost', restart: 1 });
  });

  it('shows reasoning deltas as a reasoning part before the answer', async () => {
    const reasoning: AgentEvent[] = [
      { type: 'reasoning-delta', step: 1, delta: 'Think' },
      { type: 'reasoning-delta', step: 1, delta: 'ing.' },
    ];
    const { message, chunks } = await messageOf([
      ...run,
      ...reasoning,
      { type: 'text-delta', step: 1, delta: 'Answer.' },
      ...finish,
    ]);

    expect(message.parts.map((part) => [part.type, part.text, part.state])).toEqual([
      ['step-start', undefined, undefined],
      ['reasoning', 'Thinking.', 'done'],
      ['text', 'Answer.', 'done'],
      ['data-step', undefined, undefined],
      ['data-usage', undefined, undefined],
    ]);
    expect(chunks.map((chunk) => chunk.type)).toContain('reasoning-end');
  });

  it('shows a call whose arguments are not JSON as an input error, and a rewrite as a data part', async () => {
    const { message } = await messageOf([
      ...run,
      { type: 'tool-call-start', step: 1, callId: 'c1', toolName: 'lookup' },
      { type: 'tool-call-delta', step: 1, callId: 'c1', argumentsDelta: '{"wo' },
      { type: 'tool-call', step: 1, callId: 'c1', toolName: 'lookup', argumentsText: '{"wo' },
      {
        type: 'tool-result',
        step: 1,
        callId: 'c1',
        toolName: 'lookup',
        durationMs: 0,
        ok: false,
        error: { code: 'tool-invalid-json', message: 'Not JSON.' },
      },
      { type: 'text-delta', step: 1, delta: 'Oops' },
      { type: 'text-rewrite', step: 1, text: 'Sorry.', guardrails: ['polite'] },
      ...finish,
    ]);

    expect(message.parts.find((part) => part.type === 'tool-lookup')).toMatchObject({
      state: 'output-error',
      errorText: 'Not JSON.',
    });
    expect(message.parts.find((part) => part.type === 'data-text-rewrite')).toMatchObject({
      data: { text: 'Sorry.', guardrails: ['polite'] },
    });
  });

  it('pauses only once every call of the step is settled or waits for approval', () => {
    const mapper = new EventChunkMapper('r');
    for (const event of [
      ...run,
      {
        type: 'tool-call',
        step: 1,
        callId: 'a',
        toolName: 't',
        argumentsText: '{}',
        arguments: {},
      },
      {
        type: 'tool-call',
        step: 1,
        callId: 'b',
        toolName: 't',
        argumentsText: '{}',
        arguments: {},
      },
      {
        type: 'approval-request',
        step: 1,
        approvalId: 'ap',
        callId: 'a',
        toolName: 't',
        arguments: {},
      },
    ] satisfies AgentEvent[])
      mapper.map(event);
    expect(mapper.paused).toBe(false);

    mapper.map({
      type: 'tool-result',
      step: 1,
      callId: 'b',
      toolName: 't',
      durationMs: 1,
      ok: true,
      output: 1,
    });

    expect(mapper.paused).toBe(true);
    expect([...mapper.awaitingApprovals]).toEqual([['ap', 'a']]);
  });
});
