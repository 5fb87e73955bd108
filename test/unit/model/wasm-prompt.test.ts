import { describe, expect, it } from 'vitest';
import {
  defaultWasmPrompt,
  envelopeSchema,
  envelopeTextSoFar,
  parseEnvelope,
} from '../../../src/model/wasm-prompt';
import type { ToolDescriptor } from '../../../src/protocol/tools';

const WEATHER: ToolDescriptor = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('the on-device model’s prompt and envelope', () => {
  it('writes every message as a role-tagged block and ends on the assistant’s tag', () => {
    const prompt = defaultWasmPrompt(
      [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', url: 'https://x/y.png' },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"sky":"grey"}' },
      ],
      [],
    );
    expect(prompt).toBe(
      [
        '<|system|>\nBe brief.',
        '<|user|>\nLook:\n[an image]',
        '<|assistant|>\n{"tool_calls":[{"name":"get_weather","arguments":"{\\"city\\":\\"Oslo\\"}"}]}',
        '<|tool|>\nc1: {"sky":"grey"}',
        '<|assistant|>\n',
      ].join('\n'),
    );
  });

  it('holds an answer to a text or calls of the offered tools, with their own parameters', () => {
    const schema = envelopeSchema([WEATHER]) as { oneOf: Record<string, unknown>[] };
    expect(schema.oneOf[1]).toMatchObject({
      properties: {
        tool_calls: {
          items: { properties: { name: { const: 'get_weather' }, arguments: WEATHER.parameters } },
        },
      },
    });
  });

  it('reads a text envelope and a tool-call envelope', () => {
    expect(parseEnvelope(' {"text": "Hi \\"there\\""} ', [WEATHER])).toEqual({
      kind: 'text',
      text: 'Hi "there"',
    });
    expect(
      parseEnvelope('{"tool_calls":[{"name":"get_weather","arguments":{"city":"Oslo"}}]}', [
        WEATHER,
      ]),
    ).toEqual({
      kind: 'tool-calls',
      calls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }],
    });
  });

  it.each([
    ['not JSON', '{"text": "cut'],
    ['an array', '[1]'],
    ['neither text nor calls', '{"other": 1}'],
    ['both text and calls', '{"text":"a","tool_calls":[{"name":"get_weather","arguments":{}}]}'],
    ['no calls', '{"tool_calls":[]}'],
    ['a tool not offered', '{"tool_calls":[{"name":"delete_all","arguments":{}}]}'],
    ['arguments that are no object', '{"tool_calls":[{"name":"get_weather","arguments":"{}"}]}'],
    ['a call that is null', '{"tool_calls":[null]}'],
  ])('refuses an envelope that is %s with model-stream-malformed', (_, output) => {
    expect(() => parseEnvelope(output, [WEATHER])).toThrow(
      expect.objectContaining({ code: 'model-stream-malformed' }),
    );
  });

  it('streams a text envelope’s string as it is written, holding back an escape cut in half', () => {
    expect(envelopeTextSoFar('{"te')).toBeUndefined();
    expect(envelopeTextSoFar('{"tool_calls":[')).toBeUndefined();
    expect(envelopeTextSoFar('{ "text" : "ab')).toBe('ab');
    expect(envelopeTextSoFar('{"text":"a\\')).toBe('a');
    expect(envelopeTextSoFar('{"text":"a\\u00')).toBe('a');
    expect(envelopeTextSoFar('{"text":"a\\u00e9\\n')).toBe('a\u00e9\n');
    expect(envelopeTextSoFar('{"text":"a"} trailing')).toBe('a');
  });

  it('reads a huge envelope whole', () => {
    const text = 'x'.repeat(1_000_000);
    expect(parseEnvelope(JSON.stringify({ text }), [])).toEqual({ kind: 'text', text });
    expect(envelopeTextSoFar(JSON.stringify({ text }))).toBe(text);
  });
});
