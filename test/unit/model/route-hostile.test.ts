import { describe, expect, it, vi } from 'vitest';
import { type ModelRoute, route } from '../../../src/model/route-model';
import { ManualTimers } from '../timing/manual-timers';
import { model, streamed, text } from './route-fixtures';

describe('route: hostile routes and options', () => {
  it('passes over a route whose when throws (or answers a non-boolean), saying what it threw', async () => {
    const router = route([
      {
        model: model('broken'),
        when: () => {
          throw new Error('labels missing');
        },
      },
      { model: model('truthy'), when: (() => 'yes') as unknown as () => boolean },
      { model: model('fine') },
    ]);
    const { choices } = await streamed(router, text('Hi'));
    expect(choices).toEqual([
      {
        route: 'fine',
        passedOver: [
          {
            route: 'broken',
            reason: 'declined',
            error: expect.objectContaining({ message: expect.stringContaining('labels missing') }),
          },
          { route: 'truthy', reason: 'declined' },
        ],
      },
    ]);
  });

  it('bounds an available() that never answers, then passes the route over', async () => {
    const timers = new ManualTimers();
    const router = route(
      [
        { model: model('stuck'), available: () => new Promise<boolean>(() => {}) },
        { model: model('spare') },
      ],
      { availableTimeoutMs: 500, timers },
    );
    const pending = streamed(router, text('Hi'));
    // The routing chunk loads first; then available() is asked and its deadline set.
    await vi.waitFor(() => expect(timers.pending).toBe(1));
    await timers.advance(500);
    const result = await pending;
    expect(result.text).toBe('spare answers');
    expect(result.choices[0]?.passedOver).toEqual([
      {
        route: 'stuck',
        reason: 'unavailable',
        error: expect.objectContaining({ code: 'model-unavailable' }),
      },
    ]);
    expect(timers.pending).toBe(0);
  });

  it('passes over a route whose available() rejects', async () => {
    const router = route([
      { model: model('a'), available: () => Promise.reject(new Error('quota API down')) },
      { model: model('b') },
    ]);
    const { choices } = await streamed(router, text('Hi'));
    expect(choices[0]?.passedOver[0]).toMatchObject({
      route: 'a',
      reason: 'unavailable',
      error: { message: expect.stringContaining('quota API down') },
    });
  });

  it.each<[string, unknown]>([
    ['an empty list', []],
    ['not an array', { model: model('a') }],
    ['null', null],
    ['a route that is not an object', ['gpt']],
    ['a model without stream()', [{ model: { name: 'x', complete: () => undefined } }]],
    ['two routes of one name', [{ model: model('a') }, { model: model('a') }]],
    ['a nameless model', [{ model: { ...model('a'), name: '' } }]],
    ['a when that is not a function', [{ model: model('a'), when: true }]],
    ['a context that is not a positive integer', [{ model: model('a'), maxContextTokens: -1 }]],
    ['accepts with a string flag', [{ model: model('a'), accepts: { images: 'no' } }]],
    ['a huge list', Array.from({ length: 10_000 }, (_, index) => ({ model: model(`m${index}`) }))],
  ])('fails every call with invalid-options for %s, nothing sent', async (_, routes) => {
    const router = route(routes as readonly ModelRoute[]);
    const signal = new AbortController().signal;
    await expect(router.complete(text('Hi'), { signal })).rejects.toMatchObject({
      code: 'invalid-options',
    });
    const { error } = await streamed(router, text('Hi'));
    expect(error).toMatchObject({ code: 'invalid-options' });
  });

  it('fails with invalid-options for an availableTimeoutMs that is not a positive number', async () => {
    const answering = model('a');
    const router = route([{ model: answering }], { availableTimeoutMs: Number.NaN });
    const { error } = await streamed(router, text('Hi'));
    expect(error).toMatchObject({ code: 'invalid-options' });
    expect(answering.calls).toHaveLength(0);
  });
});
