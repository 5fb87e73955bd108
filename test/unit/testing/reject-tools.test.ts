// @vitest-environment node
import OpenAI, { BadRequestError } from 'openai';
import { describe, expect, it } from 'vitest';
import { createRemoteSession } from '../../../src/testing-remote.js';
import { useModelServer } from '../support/model-server';

const server = useModelServer();

const client = (baseURL: string) =>
  new OpenAI({ baseURL, apiKey: 'test', maxRetries: 0, logLevel: 'off', timeout: 2000 });

const tools = [
  {
    type: 'function' as const,
    function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
  },
];

async function rejection(request: Promise<unknown>): Promise<unknown> {
  try {
    await request;
  } catch (error) {
    return error;
  }
  throw new Error('The request was not rejected.');
}

describe('a session without function calling', () => {
  it('answers 400 in OpenAI’s error shape to tools, tool_choice, tool messages and assistant tool_calls, using no turn', async () => {
    const session = server.createSession([{ text: 'Plain answer.' }], { rejectTools: true });
    const openai = client(session.baseURL);
    const user = { role: 'user' as const, content: 'Hi' };

    const refused = await Promise.all([
      rejection(openai.chat.completions.create({ model: 'm', messages: [user], tools })),
      rejection(
        openai.chat.completions.create({ model: 'm', messages: [user], tool_choice: 'none' }),
      ),
      rejection(
        openai.chat.completions.create({
          model: 'm',
          messages: [
            user,
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
              ],
            },
            { role: 'tool', tool_call_id: 'c', content: 'sunny' },
          ],
        }),
      ),
    ]);
    const answer = await openai.chat.completions.create({ model: 'm', messages: [user] });

    for (const error of refused) {
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).error).toEqual({
        message: 'The model "m" does not support tools.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      });
    }
    expect(answer.choices[0]?.message.content).toBe('Plain answer.');
    expect(session.requests.map((request) => request.turnIndex)).toEqual([-1, -1, -1, 0]);
  });

  it('can be asked for through the control API', async () => {
    const remote = await createRemoteSession(server.url, [{ text: 'ok' }], { rejectTools: true });

    const error = await rejection(
      client(remote.baseURL).chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'Hi' }],
        tools,
      }),
    );

    expect((error as BadRequestError).status).toBe(400);
    expect((await remote.requests())[0]?.turnIndex).toBe(-1);
  });

  it('serves tool requests as before when the option is off', async () => {
    const session = server.createSession([{ text: 'ok' }]);
    const answer = await client(session.baseURL).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Hi' }],
      tools,
    });
    expect(answer.choices[0]?.message.content).toBe('ok');
  });
});
