import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type { ChatModel } from '../../../src/model/chat-model';
import { route } from '../../../src/model/route-model';
import { model, serverError, streamed, text, tool, usage, withImage } from './route-fixtures';

describe('route: choosing a route per request', () => {
  it('answers with the first route when every rule holds, and tells which', async () => {
    const first = model('local');
    const second = model('cloud');
    const result = await streamed(route([{ model: first }, { model: second }]), text('Hi'));
    expect(result.text).toBe('local answers');
    expect(result.choices).toEqual([{ route: 'local', passedOver: [] }]);
    expect(second.calls).toHaveLength(0);
  });

  it('passes over a route whose when declines, naming it and the reason', async () => {
    const local = model('local');
    const cloud = model('cloud');
    const router = route([
      { model: cloud, name: 'cloud', when: (request) => request.messages.length > 5 },
      { model: local },
    ]);
    const result = await streamed(router, text('Hi'));
    expect(result.text).toBe('local answers');
    expect(result.choices).toEqual([
      { route: 'local', passedOver: [{ route: 'cloud', reason: 'declined' }] },
    ]);
    expect(cloud.calls).toHaveLength(0);
  });

  it('passes over a route that does not accept images when a user message carries one', async () => {
    const router = route([
      { model: model('small'), accepts: { images: false } },
      { model: model('vision') },
    ]);
    expect((await streamed(router, withImage)).choices).toEqual([
      { route: 'vision', passedOver: [{ route: 'small', reason: 'images' }] },
    ]);
    expect((await streamed(router, text('Hi'))).choices[0]?.route).toBe('small');
  });

  it('passes over a route that does not accept tools only when tools are offered', async () => {
    const router = route([
      { model: model('plain'), accepts: { tools: false } },
      { model: model('tooled') },
    ]);
    const offered = { ...text('Weather?'), tools: [tool] };
    expect((await streamed(router, offered)).choices).toEqual([
      { route: 'tooled', passedOver: [{ route: 'plain', reason: 'tools' }] },
    ]);
    expect((await streamed(router, text('Hi'))).choices[0]?.route).toBe('plain');
  });

  it('passes over a route whose context the request does not fit, with both counts', async () => {
    const router = route([
      { model: model('short'), maxContextTokens: 50 },
      { model: model('long'), maxContextTokens: 1_000_000 },
    ]);
    const result = await streamed(router, text('word '.repeat(500)));
    expect(result.choices[0]?.route).toBe('long');
    const passed = result.choices[0]?.passedOver[0];
    expect(passed).toMatchObject({ route: 'short', reason: 'context', maxContextTokens: 50 });
    expect(passed?.tokens).toBeGreaterThan(50);
    expect((await streamed(router, text('Hi'))).choices[0]?.route).toBe('short');
  });

  it('passes over a route that is not available, asking only the routes it reaches', async () => {
    const asked: string[] = [];
    const router = route([
      {
        model: model('local'),
        available: async () => {
          asked.push('local');
          return false;
        },
      },
      { model: model('cloud'), available: () => asked.push('cloud') > 0 },
      { model: model('spare'), available: () => asked.push('spare') > 0 },
    ]);
    const result = await streamed(router, text('Hi'));
    expect(result.choices).toEqual([
      { route: 'cloud', passedOver: [{ route: 'local', reason: 'unavailable' }] },
    ]);
    expect(asked).toEqual(['local', 'cloud']);
  });

  it('fails no-model-route naming every route and why, when none is eligible', async () => {
    const router = route([
      { model: model('small'), accepts: { images: false } },
      { model: model('cloud'), when: () => false },
    ]);
    const { error } = await streamed(router, withImage);
    expect(error).toBeInstanceOf(AirlockError);
    expect(error).toMatchObject({
      code: 'no-model-route',
      details: {
        routes: [
          { route: 'small', reason: 'images' },
          { route: 'cloud', reason: 'declined' },
        ],
      },
    });
  });
});

describe('route: falling back on a fault', () => {
  it.each([
    ['a 5xx', serverError()],
    ['an unreachable endpoint', new AirlockError('model-unreachable', 'No answer.')],
    ['a rate limit', new AirlockError('model-rate-limited', 'Slow down.')],
    ['a model that says it is unavailable', new AirlockError('model-unavailable', 'Not loaded.')],
  ])('tries the next route after %s before any content', async (_, fault) => {
    const failing = model('local', {
      fault,
      // Parts that show nothing are held back, and dropped with the failed route.
      before: [{ type: 'usage', usage }],
    });
    const spare = model('cloud');
    const result = await streamed(route([{ model: failing }, { model: spare }]), text('Hi'));
    expect(result.text).toBe('cloud answers');
    expect(result.parts.filter((part) => part.type === 'usage')).toHaveLength(1);
    expect(result.choices).toEqual([
      {
        route: 'cloud',
        passedOver: [
          {
            route: 'local',
            reason: 'failed',
            error: expect.objectContaining({ code: fault.code }),
          },
        ],
      },
    ]);
    expect([failing.calls.length, spare.calls.length]).toEqual([1, 1]);
  });

  it('never falls back once the route streamed content: the caller sees one response', async () => {
    const failing = model('local', {
      before: [{ type: 'text-delta', delta: 'Half an ans' }],
      fault: serverError(),
    });
    const spare = model('cloud');
    const result = await streamed(route([{ model: failing }, { model: spare }]), text('Hi'));
    expect(result.text).toBe('Half an ans');
    expect(result.error).toMatchObject({ code: 'model-http-error' });
    expect(result.choices).toEqual([{ route: 'local', passedOver: [] }]);
    expect(spare.calls).toHaveLength(0);
  });

  it.each([
    ['a refused request (400)', 'model-http-error', { status: 400 }],
    ['a body too large (413)', 'model-http-error', { status: 413 }],
    ['refused credentials', 'model-auth', { status: 401 }],
    ['a malformed stream', 'model-stream-malformed', {}],
  ] as const)('does not fall back on %s', async (_, code, details) => {
    const failing = model('local', { fault: new AirlockError(code, 'No.', { details }) });
    const spare = model('cloud');
    const result = await streamed(route([{ model: failing }, { model: spare }]), text('Hi'));
    expect(result.error).toMatchObject({ code, details });
    expect(spare.calls).toHaveLength(0);
  });

  it('does not fall back on something thrown that is not an AirlockError', async () => {
    const thrown = new TypeError('engine exploded');
    const spare = model('cloud');
    const result = await streamed(
      route([{ model: model('local', { fault: thrown }) }, { model: spare }]),
      text('Hi'),
    );
    expect(result.error).toBe(thrown);
    expect(spare.calls).toHaveLength(0);
  });

  it('fails with the last fault, every route in its details, when all eligible ones failed', async () => {
    const router = route([
      { model: model('a', { fault: serverError() }) },
      { model: model('b'), when: () => false },
      { model: model('c', { fault: new AirlockError('model-unreachable', 'Gone.') }) },
    ]);
    const { error, choices } = await streamed(router, text('Hi'));
    expect(choices).toEqual([]);
    expect(error).toMatchObject({
      code: 'model-unreachable',
      message: 'Gone.',
      details: {
        routes: [
          {
            route: 'a',
            reason: 'failed',
            error: expect.objectContaining({ code: 'model-http-error' }),
          },
          { route: 'b', reason: 'declined' },
          {
            route: 'c',
            reason: 'failed',
            error: expect.objectContaining({ code: 'model-unreachable' }),
          },
        ],
      },
    });
  });

  it('never falls back on an abort', async () => {
    const controller = new AbortController();
    const aborting: ChatModel = {
      name: 'local',
      async *stream() {
        yield* [];
        controller.abort();
        throw new AirlockError('model-unreachable', 'The request was cut by the abort.');
      },
      complete: async () => ({ text: '', usage }),
    };
    const spare = model('cloud');
    const result = await streamed(route([{ model: aborting }, { model: spare }]), text('Hi'), {
      signal: controller.signal,
    });
    expect(result.error).toMatchObject({ code: 'model-unreachable' });
    expect(spare.calls).toHaveLength(0);
    expect(result.choices).toEqual([]);
  });

  it('routes complete() by the same rules and falls back on a fault', async () => {
    const failing = model('local', { fault: serverError() });
    const declined = model('private');
    const spare = model('cloud');
    const router = route([
      { model: declined, when: () => false },
      { model: failing },
      { model: spare },
    ]);
    const answer = await router.complete(text('Sum up'), { signal: new AbortController().signal });
    expect(answer.text).toBe('cloud answers');
    expect([declined.calls.length, failing.calls.length, spare.calls.length]).toEqual([0, 1, 1]);
    const refusing = route([
      { model: model('x', { fault: new AirlockError('model-auth', 'No.') }) },
      { model: spare },
    ]);
    await expect(
      refusing.complete(text('Sum up'), { signal: new AbortController().signal }),
    ).rejects.toMatchObject({ code: 'model-auth' });
    await expect(
      route([{ model: spare, when: () => false }]).complete(text('Hi'), {
        signal: new AbortController().signal,
      }),
    ).rejects.toMatchObject({ code: 'no-model-route' });
  });
});
