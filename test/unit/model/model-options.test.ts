import { describe, expect, it } from 'vitest';
import { checkField } from '../../../src/errors/field-checks';
import {
  chatRequestFields,
  mergeModelOptions,
  modelOptionsCheck,
  responsesRequestFields,
} from '../../../src/model/model-options';

const check = (value: unknown) => () => checkField(value, 'model.options', modelOptionsCheck);

describe('model options', () => {
  it('takes every documented field within its range', () => {
    expect(
      check({
        temperature: 0,
        top_p: 1,
        max_completion_tokens: 1,
        max_tokens: 4096,
        frequency_penalty: -2,
        presence_penalty: 2,
        seed: -3,
        stop: 'END',
        parallel_tool_calls: true,
        reasoning_effort: 'low',
        verbosity: 'high',
        service_tier: 'flex',
        user: 'u',
        safety_identifier: 's',
        prompt_cache_key: 'k',
        logit_bias: { '50256': -100 },
        extra: { top_k: 40, nested: { a: [1, 'b', null] } },
        top_p_unused: undefined,
      }),
    ).not.toThrow();
  });

  it('names the field of each mistake', () => {
    const cases: Array<[unknown, string]> = [
      [null, 'model.options'],
      [[], 'model.options'],
      [{ top_k: 40 }, 'model.options.top_k'],
      [{ max_completion_tokens: 0 }, 'model.options.max_completion_tokens'],
      [{ max_completion_tokens: '100' }, 'model.options.max_completion_tokens'],
      [{ top_p: Number.NaN }, 'model.options.top_p'],
      [{ stop: [1] }, 'model.options.stop[0]'],
      [{ logit_bias: { '1': 101 } }, 'model.options.logit_bias.1'],
      [{ user: '' }, 'model.options.user'],
      [{ user: 'u'.repeat(513) }, 'model.options.user'],
      [{ extra: { tools: [] } }, 'model.options.extra.tools'],
      [{ extra: { response_format: {} } }, 'model.options.extra.response_format'],
      [{ extra: { temperature: 1 } }, 'model.options.extra.temperature'],
      [{ extra: { callback: () => 1 } }, 'model.options.extra'],
      [{ extra: 'top_k=40' }, 'model.options.extra'],
    ];
    for (const [value, field] of cases) {
      expect(check(value), field).toThrow(
        expect.objectContaining({ code: 'invalid-options', details: { field } }),
      );
    }
  });

  it('refuses extra fields whose JSON is too long or that have none', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(check({ extra: { big: 'x'.repeat(10_001) } })).toThrow(/at most 10000 characters/);
    expect(check({ extra: { big: 10n } })).toThrow(
      expect.objectContaining({ details: { field: 'model.options.extra' } }),
    );
    expect(check({ extra: cyclic })).toThrow(
      expect.objectContaining({ details: { field: 'model.options.extra' } }),
    );
  });

  it('merges a run’s options over the agent’s, extra fields included', () => {
    expect(mergeModelOptions(undefined, undefined)).toBeUndefined();
    expect(mergeModelOptions({ seed: 1 }, undefined)).toEqual({ seed: 1 });
    expect(
      mergeModelOptions(
        { seed: 1, top_p: 0.5, extra: { top_k: 1, min_p: 0.1 } },
        { seed: 2, extra: { top_k: 5 } },
      ),
    ).toEqual({ seed: 2, top_p: 0.5, extra: { top_k: 5, min_p: 0.1 } });
  });

  it('writes the documented fields, then extra, leaving out what is unset', () => {
    expect(chatRequestFields(undefined)).toEqual({});
    expect(chatRequestFields({ seed: 1, extra: { top_k: 3 } })).toEqual({
      seed: 1,
      top_k: 3,
    });
  });
});

describe('model options under the Responses API', () => {
  it('renames the output cap and hands reasoning effort and verbosity to the caller', () => {
    expect(
      responsesRequestFields({
        temperature: 0.2,
        top_p: 0.9,
        max_completion_tokens: 300,
        parallel_tool_calls: false,
        reasoning_effort: 'low',
        verbosity: 'high',
        service_tier: 'flex',
        user: 'u-1',
        prompt_cache_key: 'k',
        extra: { top_k: 5 },
      }),
    ).toEqual({
      fields: {
        temperature: 0.2,
        top_p: 0.9,
        max_output_tokens: 300,
        parallel_tool_calls: false,
        service_tier: 'flex',
        user: 'u-1',
        prompt_cache_key: 'k',
        top_k: 5,
      },
      reasoningEffort: 'low',
      verbosity: 'high',
    });
    expect(responsesRequestFields({ max_tokens: 64 }).fields).toEqual({ max_output_tokens: 64 });
    expect(responsesRequestFields(undefined)).toEqual({ fields: {} });
  });

  it.each([
    ['seed', { seed: 1 }],
    ['stop', { stop: ['END'] }],
    ['frequency_penalty', { frequency_penalty: 1 }],
    ['presence_penalty', { presence_penalty: -1 }],
    ['logit_bias', { logit_bias: { '50256': -100 } }],
  ] as const)('refuses %s, which that API lacks, naming the field', (name, options) => {
    expect(() => responsesRequestFields(options)).toThrow(
      expect.objectContaining({
        code: 'invalid-options',
        details: { field: `model.options.${name}` },
      }),
    );
  });
});
