import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../../src/model/chat-model';
import type { ModelRoute } from '../../../src/model/model-route';
import { route } from '../../../src/model/route-model';
import type { RunFlow } from '../../../src/protocol/labels';
import { MAX_LEVEL_CHARS } from '../../../src/protocol/labels';
import { model, streamed, text } from './route-fixtures';

const labelled = (label: RunFlow): ModelRequest => ({ ...text('My PIN is 4321.'), label });
const publicLabel: RunFlow = { confidentiality: [], integrity: 'trusted', sources: [] };
const privateLabel: RunFlow = { confidentiality: ['private'], integrity: 'trusted', sources: [] };

describe('route: accepts.confidentiality', () => {
  it('passes over a public-only route for a private request, naming the level', async () => {
    const cloud = model('cloud');
    const local = model('local');
    const router = route([{ model: cloud, accepts: { confidentiality: [] } }, { model: local }]);
    const result = await streamed(router, labelled(privateLabel));
    expect(result.text).toBe('local answers');
    expect(result.choices).toEqual([
      {
        route: 'local',
        passedOver: [{ route: 'cloud', reason: 'confidentiality', levels: ['private'] }],
      },
    ]);
    expect(cloud.calls).toHaveLength(0);
    // complete() (summaries, learning) is routed by the same rule.
    const signal = new AbortController().signal;
    expect((await router.complete(labelled(privateLabel), { signal })).text).toBe('local answers');
    expect(cloud.calls).toHaveLength(0);
  });

  it('takes the route for a public request, and for a level it names', async () => {
    const cloud = model('cloud');
    const router = route([
      { model: cloud, accepts: { confidentiality: ['work'] } },
      { model: model('local') },
    ]);
    expect((await streamed(router, labelled(publicLabel))).choices[0]?.route).toBe('cloud');
    const work: RunFlow = { ...publicLabel, confidentiality: ['work'] };
    expect((await streamed(router, labelled(work))).choices[0]?.route).toBe('cloud');
    const both: RunFlow = { ...publicLabel, confidentiality: ['private', 'work'] };
    expect((await streamed(router, labelled(both))).choices[0]).toMatchObject({
      route: 'local',
      passedOver: [{ reason: 'confidentiality', levels: ['private'] }],
    });
  });

  it('passes over a restricted route for a request that carries no label', async () => {
    const cloud = model('cloud');
    const router = route([
      { model: cloud, accepts: { confidentiality: [] } },
      { model: model('b') },
    ]);
    expect((await streamed(router, text('Hi'))).choices[0]).toMatchObject({
      route: 'b',
      passedOver: [{ route: 'cloud', reason: 'confidentiality', levels: ['unlabelled'] }],
    });
    expect(cloud.calls).toHaveLength(0);
  });

  it('fails no-model-route when every route refuses the level, sending nothing', async () => {
    const cloud = model('cloud');
    const router = route([{ model: cloud, accepts: { confidentiality: ['work'] } }]);
    const { error } = await streamed(router, labelled(privateLabel));
    expect(error).toMatchObject({
      code: 'no-model-route',
      details: { routes: [{ route: 'cloud', reason: 'confidentiality', levels: ['private'] }] },
    });
    expect(cloud.calls).toHaveLength(0);
  });

  it.each<[string, unknown]>([
    ['a string, not a list', 'public'],
    ['a list of numbers', [1, 2]],
    ['an empty level', ['']],
    ['a huge level', ['x'.repeat(MAX_LEVEL_CHARS + 1)]],
    ['a huge list', Array.from({ length: 10_000 }, (_, index) => `level-${index}`)],
  ])(
    'fails every call with invalid-options for accepts.confidentiality as %s',
    async (_, levels) => {
      const answering = model('a');
      const router = route([
        { model: answering, accepts: { confidentiality: levels } } as unknown as ModelRoute,
      ]);
      const { error } = await streamed(router, labelled(publicLabel));
      expect(error).toMatchObject({ code: 'invalid-options' });
      expect(answering.calls).toHaveLength(0);
    },
  );
});
