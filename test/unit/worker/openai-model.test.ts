// @vitest-environment node
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/protocol/agent-config';
import { openAIModel } from '../../../src/worker/services/openai-model';
import { useModelServer } from '../support/model-server';

const server = useModelServer();

describe('openAIModel', () => {
  it('streams from the endpoint at its baseURL, as the agent’s built-in model does', async () => {
    const session = server.createSession([{ text: 'From the endpoint.' }]);
    const model = openAIModel({ model: 'airlock-test-model', baseURL: session.baseURL });
    let text = '';
    const options = { signal: new AbortController().signal, idleTimeoutMs: 10_000 };
    for await (const part of model.stream(
      { messages: [{ role: 'user', content: 'Hi' }], tools: [] },
      options,
    ))
      if (part.type === 'text-delta') text += part.delta;
    expect(text).toBe('From the endpoint.');
    expect(session.requests).toHaveLength(1);
  });

  it.each<[string, unknown]>([
    ['no baseURL', { model: 'm' }],
    ['a baseURL that is not http(s)', { model: 'm', baseURL: 'javascript:alert(1)' }],
    ['a blank model', { model: ' ', baseURL: 'https://example.com/v1' }],
    [
      'maxRetries of the wrong type',
      { model: 'm', baseURL: 'https://example.com/v1', maxRetries: '3' },
    ],
    ['an unknown api', { model: 'm', baseURL: 'https://example.com/v1', api: 'completions' }],
    ['not an object', 'https://example.com/v1'],
  ])('fails its calls with invalid-options for %s', async (_, config) => {
    const model = openAIModel(config as ModelConfig & { baseURL: string });
    const signal = new AbortController().signal;
    await expect(
      model.complete({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }, { signal }),
    ).rejects.toMatchObject({ code: 'invalid-options' });
  });
});
