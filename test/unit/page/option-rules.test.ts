import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { renderOptionRules, toOptionRule } from '../../../scripts/option-rules.mjs';
import { agentConfigSchema } from '../../../src/worker/services/config-schema';

// The page checks options by the agent worker's rules, made from the worker's schema into
// src/page/agent-config-rules.ts. This fails while that file is stale; `-u` remakes it.

/** Fields of the configuration the page makes itself (from tools, toolsets, guardrail functions). */
const PAGE_MADE = ['pageTools', 'toolsets', 'guardrails'];

const schema = z.toJSONSchema(agentConfigSchema, { unrepresentable: 'any', io: 'input' });

describe("the page's copy of the worker's option rules", () => {
  it('is the one made from the worker schema', async () => {
    await expect(renderOptionRules(schema, { omit: PAGE_MADE })).toMatchFileSnapshot(
      '../../../src/page/agent-config-rules.ts',
    );
  });

  it.each([
    [{ type: 'number', exclusiveMinimum: 5 }, /exclusiveMinimum: 5/],
    [{ type: 'string', format: 'email' }, /"format"/],
    [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, /anyOf/],
    [{}, /no type/],
    [{ type: 'string', minLength: 1, contentEncoding: 'base64' }, /contentEncoding/],
  ])('refuses to drop a rule it cannot state: %j', (node, message) => {
    expect(() =>
      toOptionRule(
        { type: 'object', properties: { limits: { type: 'object', properties: { x: node } } } },
        '',
      ),
    ).toThrow(message);
    expect(() =>
      toOptionRule(
        { type: 'object', properties: { limits: { type: 'object', properties: { x: node } } } },
        '',
      ),
    ).toThrow(/^limits\.x: /);
  });

  it('keeps the fields an object cannot do without, under "!"', () => {
    const node = {
      type: 'object',
      properties: { model: { type: 'string' }, apiKey: { type: 'string' } },
      required: ['model'],
    };
    expect(toOptionRule(node, '')).toEqual({ '!': ['model'], model: 'str', apiKey: 'str' });
    expect(() =>
      toOptionRule({ type: 'object', additionalProperties: {}, required: ['x'] }, 'prices'),
    ).toThrow(/^prices: .*"required"/);
  });
});
