import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelStreamPart } from '../../../src/model/chat-model';
import { ToolBlockParser } from '../../../src/model/tool-block-parser';

/** Feeds `pieces` to a parser with predictable ids and returns every part, in order. */
function parse(pieces: readonly string[]): ModelStreamPart[] {
  let next = 0;
  const parser = new ToolBlockParser(() => `call_${next++}`);
  return [...pieces.flatMap((piece) => parser.push(piece)), ...parser.end()];
}

/** What the parts amount to: the answer text and each call's id, name and arguments. */
function settle(parts: readonly ModelStreamPart[]) {
  let text = '';
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const part of parts) {
    if (part.type === 'text-delta') text += part.delta;
    if (part.type === 'tool-call-delta') {
      calls[part.index] ??= { arguments: '' };
      const call = calls[part.index] ?? { arguments: '' };
      if (part.id) call.id = part.id;
      if (part.name) call.name = part.name;
      call.arguments += part.argumentsDelta;
    }
  }
  return { text, calls };
}

const twoCalls = [
  'Let me look both up.\n',
  '```json\n{"tool": "get_weather", "arguments": {"city": "Paris"}}\n```\n',
  '```json\n{"tool":"get_weather","arguments":{"city":"Oslo"}}\n```\n',
].join('');

describe('reading prompted tool calls from streamed text', () => {
  it('turns each fenced block into a call, keeping the text outside as the answer', () => {
    expect(settle(parse([twoCalls]))).toEqual({
      text: 'Let me look both up.',
      calls: [
        { id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      ],
    });
  });

  it('reads the same calls and text however the stream is split', () => {
    const samples = [
      twoCalls,
      'Here:\n```json\n{"a": 1}\n```\n```python\nx = "```"\n```\nthen ```json\n{"tool": "t", "arguments": {"b": [1, 2]}}\n```',
      '```json\n{"tool": "t", "arguments": {"b": \n```\nSorry.',
    ];
    for (const sample of samples) {
      const whole = settle(parse([sample]));
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.integer({ min: 1, max: sample.length - 1 }), { maxLength: 12 }),
          (cuts) => {
            const points = [0, ...cuts.sort((a, b) => a - b), sample.length];
            const pieces = points.slice(1).map((end, i) => sample.slice(points[i], end));
            expect(settle(parse(pieces))).toEqual(whole);
          },
        ),
      );
    }
  });

  it("announces a call as soon as its name has streamed, before the block's end", () => {
    let next = 0;
    const parser = new ToolBlockParser(() => `call_${next++}`);
    parser.push('```json\n{"tool": "get_wea');
    const early = parser.push('ther", "arguments": {"ci');

    expect(early).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'call_0', name: 'get_weather', argumentsDelta: '' },
    ]);
    expect(parser.push('ty": "Rome"}}\n```')).toEqual([
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":"Rome"}' },
    ]);
  });

  it('passes plain answers on delta by delta', () => {
    const parts = parse(['Paris', ' is', ' 18', ' °C.']);
    expect(parts).toEqual(
      ['Paris', ' is', ' 18', ' °C.'].map((delta) => ({ type: 'text-delta', delta })),
    );
  });

  it('keeps JSON blocks without a "tool" key and code of other languages as answer text', () => {
    const answer =
      'Here is the data:\n```json\n{"city": "Paris", "temperatureC": 18}\n```\nAnd code:\n```python\nprint("```json")\n```\nDone.';
    expect(settle(parse([answer]))).toEqual({ text: answer, calls: [] });
  });

  it('makes a block that names a tool but is not JSON a call with what follows "arguments" as its arguments', () => {
    const broken = '{"tool": "get_weather", "arguments": {"city": "Paris"}';
    const { calls } = settle(parse([`\`\`\`json\n${broken}\n\`\`\``]));

    // Left for the tool pipeline to mend (here it is whole) or refuse as tool-invalid-json.
    expect(calls).toEqual([{ id: 'call_0', name: 'get_weather', arguments: '{"city": "Paris"}' }]);
  });

  it('makes a block that names a tool but has no arguments key a call with the block as its arguments', () => {
    const broken = '{"tool": "get_weather", "city": "Paris"';
    const { calls } = settle(parse([`\`\`\`json\n${broken}\n\`\`\``]));

    expect(calls).toEqual([{ id: 'call_0', name: 'get_weather', arguments: broken }]);
    expect(() => JSON.parse(calls[0]?.arguments ?? '')).toThrow();
  });

  it('unwraps arguments sent as a JSON string, defaults missing ones to {}, and closes a block left open', () => {
    const text =
      '```json\n{"tool": "a", "arguments": "{\\"x\\": 1}"}\n```\n```json\n{"tool": "b"}\n```\n```json\n{"tool": "c", "arguments": {"y": 2}}';
    expect(settle(parse([text])).calls).toEqual([
      { id: 'call_0', name: 'a', arguments: '{"x": 1}' },
      { id: 'call_1', name: 'b', arguments: '{}' },
      { id: 'call_2', name: 'c', arguments: '{"y":2}' },
    ]);
  });
});
