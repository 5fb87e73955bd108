// @vitest-environment node
import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import type { ScriptedTurn } from '../../../src/testing-remote.js';
import { useModelServer } from '../support/model-server';

const server = useModelServer();

/** The raw SSE body the server answers a streamed Responses request with. */
async function rawStream(turn: ScriptedTurn, include: string[] = []): Promise<string> {
  const session = server.createSession([turn]);
  const response = await fetch(`${session.baseURL}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', input: 'Hi', stream: true, include }),
  });
  return response.text();
}

const eventsOf = (body: string) =>
  body
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      return {
        name: eventLine?.slice('event: '.length),
        data: JSON.parse(dataLine?.slice(6) ?? ''),
      };
    });

describe('the testing server speaking the Responses API', () => {
  it('streams a scripted turn as the real event sequence, each event named, numbered, and no [DONE]', async () => {
    const body = await rawStream(
      {
        reasoning: 'Think first.',
        text: 'Hello there.',
        toolCalls: [{ id: 'call_1', name: 'w', arguments: { city: 'Oslo' } }],
        argumentChunks: 2,
        usage: { prompt_tokens: 7, completion_tokens: 9 },
      },
      ['reasoning.encrypted_content'],
    );
    expect(body).not.toContain('[DONE]');
    const events = eventsOf(body);
    for (const event of events) expect(event.name).toBe(event.data.type);
    expect(events.map((event) => event.data.sequence_number)).toEqual(
      events.map((_, index) => index),
    );
    expect(events.map((event) => event.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const completed = events.at(-1)?.data.response;
    expect(completed).toMatchObject({
      status: 'completed',
      output_text: 'Hello there.',
      usage: { input_tokens: 7, output_tokens: 9, total_tokens: 16 },
    });
    expect(completed.output.map((item: { type: string }) => item.type)).toEqual([
      'reasoning',
      'message',
      'function_call',
    ]);
    expect(completed.output[0].encrypted_content).toBe(
      `enc:${Buffer.from('Think first.').toString('base64')}`,
    );
    expect(completed.output[2]).toMatchObject({ call_id: 'call_1', arguments: '{"city":"Oslo"}' });
  });

  it('carries no encrypted reasoning unless the request includes it', async () => {
    const events = eventsOf(await rawStream({ reasoning: 'Private.', text: 'Ok.' }));
    const done = events.find(
      (event) =>
        event.data.type === 'response.output_item.done' && event.data.item.type === 'reasoning',
    );
    expect(done?.data.item).not.toHaveProperty('encrypted_content');
  });

  it('places a fault where it falls in the chat stream: cut after the role chunk and two words', async () => {
    const session = server.createSession([
      { text: 'One two three four', fault: { kind: 'cut', afterChunks: 3 } },
    ]);
    const client = new OpenAI({
      baseURL: session.baseURL,
      apiKey: 'k',
      maxRetries: 0,
      logLevel: 'off',
    });
    const seen: ResponseStreamEvent[] = [];
    await expect(
      (async () => {
        const stream = await client.responses.create({ model: 'm', input: 'Hi', stream: true });
        for await (const event of stream) seen.push(event);
      })(),
    ).rejects.toThrow();
    const text = seen.flatMap((event) =>
      event.type === 'response.output_text.delta' ? [event.delta] : [],
    );
    expect(text.join('')).toBe('One two');
  });

  it('answers a non-streamed request with the response object, and checks text.format as it checks response_format', async () => {
    const session = server.createSession([{ text: '{"a":1}' }]);
    const client = new OpenAI({
      baseURL: session.baseURL,
      apiKey: 'k',
      maxRetries: 0,
      logLevel: 'off',
    });
    const response = await client.responses.create({ model: 'm', input: 'Hi' });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      output_text: '{"a":1}',
    });

    const refused = await fetch(`${session.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        input: 'Hi',
        text: {
          format: {
            type: 'json_schema',
            name: 'x',
            strict: true,
            schema: { type: 'object', properties: { a: { type: 'number' } } },
          },
        },
      }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/additionalProperties/);
  });
});
