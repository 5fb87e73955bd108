import { describe, expect, it } from 'vitest';
import type { ChatModel, ModelRequest, ModelStreamPart } from '../../../src/model/chat-model';
import { promptedRequest, withPromptedTools } from '../../../src/model/prompted-tools';
import type { ChatMessage } from '../../../src/protocol/chat';

const weather = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** A model that records its requests and streams `parts`. */
function fakeModel(parts: readonly ModelStreamPart[]) {
  const requests: ModelRequest[] = [];
  const model: ChatModel = {
    name: 'fake',
    async *stream(request) {
      requests.push(request);
      yield* parts;
    },
    async complete(request) {
      requests.push(request);
      return { text: '', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } };
    },
  };
  return { model, requests };
}

const signal = new AbortController().signal;

describe('prompted tool calling', () => {
  it('describes the tools in the system prompt and sends no tools', () => {
    const request = promptedRequest({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
      ],
      tools: [weather],
    });

    expect(request.tools).toEqual([]);
    expect(request.messages[0]?.role).toBe('system');
    const system = (request.messages[0]?.content ?? '') as string;
    expect(system.startsWith('Be brief.\n\n# Tools')).toBe(true);
    expect(system).toContain('## get_weather\nCurrent weather for a city.');
    expect(system).toContain(JSON.stringify(weather.parameters));
    expect(system).toContain('```json\n{"tool": "<tool name>", "arguments":');
    expect(request.messages[1]).toEqual({ role: 'user', content: 'Weather?' });
  });

  it('replays calls as blocks and the results of one step as one user message', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'Paris and Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'c1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city": ' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '<tool_output call_id="c1">18</tool_output>' },
      { role: 'tool', tool_call_id: 'c2', content: '<tool_output call_id="c2">bad</tool_output>' },
      { role: 'assistant', content: 'Done.' },
    ];

    const { messages } = promptedRequest({ messages: history, tools: [] });

    expect(messages).toEqual([
      { role: 'user', content: 'Paris and Oslo?' },
      {
        role: 'assistant',
        content:
          '```json\n{"tool":"get_weather","arguments":{"city":"Paris"}}\n```\n\n```json\n{"city": \n```',
      },
      {
        role: 'user',
        content:
          '<tool_output call_id="c1">18</tool_output>\n\n<tool_output call_id="c2">bad</tool_output>',
      },
      { role: 'assistant', content: 'Done.' },
    ]);
  });

  it('streams calls read from the text as tool-call parts and reports them as tool_calls', async () => {
    const { model, requests } = fakeModel([
      { type: 'text-delta', delta: '```json\n{"tool": "get_weather", ' },
      { type: 'text-delta', delta: '"arguments": {"city": "Paris"}}\n```' },
      { type: 'finish', finishReason: 'stop' },
      { type: 'usage', usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
    ]);

    const parts: ModelStreamPart[] = [];
    const prompted = withPromptedTools(model);
    for await (const part of prompted.stream(
      { messages: [{ role: 'user', content: 'Paris?' }], tools: [weather] },
      { signal, idleTimeoutMs: 1000 },
    )) {
      parts.push(part);
    }

    expect(requests[0]?.tools).toEqual([]);
    expect(parts.map((part) => part.type)).toEqual([
      'tool-call-delta',
      'tool-call-delta',
      'finish',
      'usage',
    ]);
    expect(parts[0]).toMatchObject({
      index: 0,
      name: 'get_weather',
      id: expect.stringMatching(/^call_/),
    });
    expect(parts[1]).toMatchObject({ index: 0, argumentsDelta: '{"city":"Paris"}' });
    expect(parts[2]).toEqual({ type: 'finish', finishReason: 'tool_calls' });
    expect(prompted.name).toBe('fake');
  });
});
