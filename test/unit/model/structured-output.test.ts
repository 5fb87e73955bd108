import { describe, expect, it } from 'vitest';
import {
  partialJson,
  readJsonAnswer,
  repairArguments,
  responseFormat,
} from '../../../src/model/structured-output';

describe('reading a structured answer', () => {
  it.each([
    ['plain JSON', '{"a": 1}', { a: 1 }],
    ['a code fence with prose before it', 'Here you go:\n```json\n{\n "a": 1,\n}\n```', { a: 1 }],
    ['prose around the value', 'Sure! {"a": [1, 2,]} Hope it helps.', { a: [1, 2] }],
    ['single quotes and a comment', "{'a': 'x' /* note */}", { a: 'x' }],
    ['an unclosed object', '{"a": {"b": 2}', { a: { b: 2 } }],
  ])('mends %s', (_name, text, value) => {
    expect(readJsonAnswer(text)).toEqual({ ok: true, value });
  });

  it('says so when nothing in the answer is JSON', () => {
    expect(readJsonAnswer('')).toEqual({ ok: false, reason: 'The answer is not JSON.' });
  });

  it('reads a hostile, deeply nested answer or arguments as unreadable, never throwing', () => {
    // Deep enough to overflow the repair's recursive descent.
    const deep = '['.repeat(200_000);
    expect(readJsonAnswer(deep)).toEqual({ ok: false, reason: 'The answer is not JSON.' });
    expect(partialJson(deep)).toBeUndefined();
    expect(repairArguments(`{"a": ${deep}`)).toBeUndefined();
  });
});

describe('the partial object of a streaming answer', () => {
  it('closes what is open, and has nothing before a value starts', () => {
    expect(partialJson('')).toBeUndefined();
    expect(partialJson('```json\n')).toBeUndefined();
    expect(partialJson('```json\n{"a": [1, {"b": "x')).toEqual({ a: [1, { b: 'x' }] });
    expect(partialJson('{"a": 1, "b":')).toEqual({ a: 1, b: null });
  });

  it('grows with the text, ending at the whole value', () => {
    const text = JSON.stringify({ city: 'Lisbon', days: [{ day: 1 }, { day: 2 }] });
    const partials = Array.from({ length: text.length }, (_, index) =>
      partialJson(text.slice(0, index + 1)),
    );
    expect(partials.at(-1)).toEqual({ city: 'Lisbon', days: [{ day: 1 }, { day: 2 }] });
    expect(partials.every((partial) => partial === undefined || typeof partial === 'object')).toBe(
      true,
    );
  });
});

describe('response_format', () => {
  it('closes every object and is strict when every property is required', () => {
    const format = responseFormat({
      type: 'object',
      properties: {
        a: { type: 'object', properties: { b: { type: 'string' } }, required: ['b'] },
        list: { type: 'array', items: { type: 'object', properties: {}, required: [] } },
        properties: { type: 'string' },
      },
      required: ['a', 'list', 'properties'],
    });
    expect(format.strict).toBe(true);
    expect(format.schema).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        a: {
          type: 'object',
          properties: { b: { type: 'string' } },
          required: ['b'],
          additionalProperties: false,
        },
        list: {
          type: 'array',
          items: { type: 'object', properties: {}, required: [], additionalProperties: false },
        },
        // A property named `properties` is a name, not a schema keyword.
        properties: { type: 'string' },
      },
      required: ['a', 'list', 'properties'],
    });
  });

  it('is not strict with an optional property or an open object', () => {
    expect(
      responseFormat({ type: 'object', properties: { a: { type: 'string' } }, required: [] })
        .strict,
    ).toBe(false);
    expect(
      responseFormat({
        type: 'object',
        properties: { a: { type: 'string' } },
        required: ['a'],
        additionalProperties: true,
      }).strict,
    ).toBe(false);
  });
});
