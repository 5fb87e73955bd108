// @vitest-environment node
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isAirlockError } from '../../../src/errors/airlock-error';
import type { ModelRequest, ModelStreamPart } from '../../../src/model/chat-model';
import { createOpenAIChatModel } from '../../../src/model/openai-chat-model';
import { ResponsesEventReader } from '../../../src/model/openai-responses-model';
import type { ModelConfig } from '../../../src/protocol/agent-config';
import type { ScriptedTurn } from '../../../src/testing-remote.js';
import { useModelServer } from '../support/model-server';

const server = useModelServer();

const hello: ModelRequest = { messages: [{ role: 'user', content: 'Hi' }], tools: [] };

/** Streams one call of the Responses model against `baseURL`; the parts and the error. */
async function streamFrom(
  baseURL: string,
  request: ModelRequest = hello,
  config: Partial<ModelConfig> = {},
) {
  const model = createOpenAIChatModel({
    baseURL,
    model: 'm',
    maxRetries: 0,
    api: 'responses',
    ...config,
  });
  const parts: ModelStreamPart[] = [];
  let error: unknown;
  try {
    for await (const part of model.stream(request, {
      signal: new AbortController().signal,
      idleTimeoutMs: 2_000,
    }))
      parts.push(part);
  } catch (thrown) {
    error = thrown;
  }
  return { parts, error };
}

function scripted(turns: ScriptedTurn[]) {
  const session = server.createSession(turns);
  return {
    session,
    stream: (request?: ModelRequest, config?: Partial<ModelConfig>) =>
      streamFrom(session.baseURL, request, config),
  };
}

/** A server answering `/responses` with these raw SSE events (any text: tests send garbage). */
async function rawServer(
  events: readonly string[],
): Promise<{ baseURL: string; close(): Promise<void> }> {
  const http: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const data of events) res.write(`data: ${data}\n\n`);
    res.end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

const completed = (usage = { input_tokens: 3, output_tokens: 4, total_tokens: 7 }) =>
  JSON.stringify({ type: 'response.completed', response: { usage } });

describe('the Responses model', () => {
  it('sends the history as input items, statelessly, with tools, effort and text.format', async () => {
    const { session, stream } = scripted([{ text: 'ok' }]);
    await stream(
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            reasoning: 'shown only',
            reasoningItems: [{ id: 'rs_1', summary: ['Think.'], encryptedContent: 'enc:abc' }],
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        ],
        tools: [{ name: 'w', description: 'Weather.', parameters: { type: 'object' } }],
        responseFormat: { name: 'answer', schema: { type: 'object' }, strict: false },
      },
      { options: { reasoning_effort: 'low' } },
    );
    const [request] = session.requests;
    expect(request?.path).toMatch(/\/v1\/responses$/);
    expect(request?.body).toMatchObject({
      model: 'm',
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'low', summary: 'auto' },
      text: {
        format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: false },
      },
      tools: [
        { type: 'function', name: 'w', description: 'Weather.', parameters: { type: 'object' } },
      ],
      input: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [{ type: 'summary_text', text: 'Think.' }],
          encrypted_content: 'enc:abc',
        },
        { type: 'function_call', call_id: 'call_1', name: 'w', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      ],
    });
    // The reasoning text is for showing; it is never sent back as content.
    expect(JSON.stringify(request?.body)).not.toContain('shown only');
  });

  it('streams the scripted reasoning, text, tool calls, finish and usage as the chat model does', async () => {
    const { stream } = scripted([
      {
        reasoning: 'Check the sky first.',
        text: 'Let me look.',
        toolCalls: [{ id: 'call_a', name: 'w', arguments: { city: 'Oslo' } }],
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      },
    ]);
    const { parts, error } = await stream();
    expect(error).toBeUndefined();
    const of = (type: ModelStreamPart['type']) => parts.filter((part) => part.type === type);
    expect(
      of('reasoning-delta')
        .map((part) => (part as { delta: string }).delta)
        .join(''),
    ).toBe('Check the sky first.');
    expect(
      of('text-delta')
        .map((part) => (part as { delta: string }).delta)
        .join(''),
    ).toBe('Let me look.');
    expect(of('reasoning-item')).toEqual([
      {
        type: 'reasoning-item',
        item: {
          id: expect.stringMatching(/^rs_/),
          summary: ['Check the sky first.'],
          encryptedContent: `enc:${Buffer.from('Check the sky first.').toString('base64')}`,
        },
      },
    ]);
    const calls = of('tool-call-delta') as Extract<ModelStreamPart, { type: 'tool-call-delta' }>[];
    expect(calls[0]).toMatchObject({ index: 0, id: 'call_a', name: 'w' });
    expect(calls.map((part) => part.argumentsDelta).join('')).toBe('{"city":"Oslo"}');
    expect(parts.slice(-2)).toEqual([
      { type: 'finish', finishReason: 'tool_calls' },
      { type: 'usage', usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
    ]);
  });

  it('ends without a finish when the stream stops before response.completed', async () => {
    const { parts, error } = await scripted([{ text: 'cut short', finishReason: null }]).stream();
    expect(error).toBeUndefined();
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('reports a length limit from response.incomplete', async () => {
    const { parts } = await scripted([{ text: 'too long', finishReason: 'length' }]).stream();
    expect(parts).toContainEqual({ type: 'finish', finishReason: 'length' });
  });

  it('fails model-stream-malformed on an event that is not JSON, and keeps nothing after it', async () => {
    const raw = await rawServer([
      JSON.stringify({ type: 'response.output_text.delta', delta: 'Hi' }),
      '{"type": "response.output_text.delta", "delta": ',
    ]);
    try {
      const { parts, error } = await streamFrom(raw.baseURL);
      expect(isAirlockError(error, 'model-stream-malformed')).toBe(true);
      expect(parts).toEqual([{ type: 'text-delta', delta: 'Hi' }]);
    } finally {
      await raw.close();
    }
  });

  it('skips event types it does not know, and events after the response ended', async () => {
    const raw = await rawServer([
      JSON.stringify({ type: 'response.created', response: { id: 'r' } }),
      JSON.stringify({ type: 'response.future_thing.delta', delta: 42, whatever: [1] }),
      JSON.stringify({ type: 'response.output_text.delta', delta: 'Hi' }),
      completed(),
      JSON.stringify({ type: 'response.output_text.delta', delta: ' again' }),
    ]);
    try {
      const { parts, error } = await streamFrom(raw.baseURL);
      expect(error).toBeUndefined();
      expect(parts).toEqual([
        { type: 'text-delta', delta: 'Hi' },
        { type: 'finish', finishReason: 'stop' },
        { type: 'usage', usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 } },
      ]);
    } finally {
      await raw.close();
    }
  });

  it('reports response.failed and error events as model-http-error', async () => {
    const raw = await rawServer([
      JSON.stringify({
        type: 'response.failed',
        response: { error: { code: 'server_error', message: 'It broke.' } },
      }),
    ]);
    try {
      const { error } = await streamFrom(raw.baseURL);
      expect(isAirlockError(error, 'model-http-error')).toBe(true);
      expect(error).toMatchObject({ message: expect.stringContaining('It broke.') });
    } finally {
      await raw.close();
    }
  });
});

describe('reading Responses events', () => {
  const readAll = (events: unknown[]) => {
    const reader = new ResponsesEventReader();
    return events.flatMap((event) => [...reader.read(event)]);
  };

  it('refuses arguments for a call that never began (out of order)', () => {
    expect(() =>
      readAll([{ type: 'response.function_call_arguments.delta', output_index: 0, delta: '{}' }]),
    ).toThrow(expect.objectContaining({ code: 'model-stream-malformed' }));
  });

  it('refuses events of the wrong shape: no type, a delta that is not text, a bad index', () => {
    for (const event of [
      null,
      [],
      { delta: 'x' },
      { type: 'response.output_text.delta', delta: 7 },
      { type: 'response.output_item.added', output_index: -1, item: { type: 'function_call' } },
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { type: 'function_call', name: 'w' },
      },
    ]) {
      expect(() => readAll([event]), JSON.stringify(event)).toThrow(
        expect.objectContaining({ code: 'model-stream-malformed' }),
      );
    }
  });

  it('takes a function call whose item has no arguments as a call with empty arguments', () => {
    const parts = readAll([
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { type: 'function_call', call_id: 'c', name: 'now' },
      },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { type: 'function_call', call_id: 'c', name: 'now' },
      },
      { type: 'response.completed', response: {} },
    ]);
    expect(parts).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'c', name: 'now', argumentsDelta: '' },
      { type: 'finish', finishReason: 'tool_calls' },
    ]);
  });

  it('takes a whole call from output_item.done when the server sent no added event or deltas', () => {
    const parts = readAll([
      {
        type: 'response.output_item.done',
        output_index: 2,
        item: { type: 'function_call', call_id: 'c', name: 'w', arguments: '{"a":1}' },
      },
    ]);
    expect(parts).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'c', name: 'w', argumentsDelta: '{"a":1}' },
    ]);
  });

  it('keeps no reasoning item that the server could not decrypt when sent back', () => {
    const parts = readAll([
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { type: 'reasoning', id: 'rs', summary: [] },
      },
    ]);
    expect(parts).toEqual([]);
  });

  it('passes a huge reasoning stream through delta by delta', () => {
    const delta = 'x'.repeat(1_000);
    const events = Array.from({ length: 5_000 }, () => ({
      type: 'response.reasoning_summary_text.delta',
      output_index: 0,
      summary_index: 0,
      delta,
    }));
    const parts = readAll(events);
    expect(parts).toHaveLength(5_000);
    expect(
      parts.every((part) => part.type === 'reasoning-delta' && part.delta.length === 1_000),
    ).toBe(true);
  });
});

describe("the chat model's reasoning", () => {
  it.each(['reasoning_content', 'reasoning'] as const)(
    'streams the %s field as reasoning-delta parts and sends reasoning_effort',
    async (reasoningField) => {
      const session = server.createSession([
        { reasoning: 'Short thought.', reasoningField, text: 'Answer.' },
      ]);
      const model = createOpenAIChatModel({
        baseURL: session.baseURL,
        model: 'm',
        maxRetries: 0,
        options: { reasoning_effort: 'minimal' },
      });
      const parts: ModelStreamPart[] = [];
      for await (const part of model.stream(hello, {
        signal: new AbortController().signal,
        idleTimeoutMs: 2_000,
      }))
        parts.push(part);
      const joined = (type: 'reasoning-delta' | 'text-delta') =>
        parts.flatMap((part) => (part.type === type ? [part.delta] : [])).join('');
      expect(joined('reasoning-delta')).toBe('Short thought.');
      expect(joined('text-delta')).toBe('Answer.');
      expect(session.requests[0]?.body).toMatchObject({ reasoning_effort: 'minimal' });
      expect(session.requests[0]?.path).toMatch(/\/chat\/completions$/);
    },
  );
});
