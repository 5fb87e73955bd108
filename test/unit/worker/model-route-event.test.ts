import type { AgentEvent } from 'airlock-agents';
import { EventChunkMapper } from 'airlock-agents/ai-sdk';
import { describe, expect, it } from 'vitest';
import { parseRelayMessage } from '../../../src/worker/tabs/relay-schema';

const routed: AgentEvent = {
  type: 'model-route',
  step: 2,
  route: 'cloud',
  passedOver: [
    { route: 'on-device', reason: 'context', tokens: 9_000, maxContextTokens: 8_000 },
    {
      route: 'backup',
      reason: 'failed',
      error: { code: 'model-http-error', message: 'The model endpoint answered 503.' },
    },
  ],
};

const relayed = (event: unknown) =>
  parseRelayMessage({ kind: 'events', source: 'tab-1', runId: 'run-1', seq: 0, events: [event] });

describe('the model-route event', () => {
  it('is relayed to watching tabs as it was sent', () => {
    expect(relayed(routed)).toEqual({
      ok: true,
      message: expect.objectContaining({ events: [routed] }),
    });
  });

  it.each([
    ['a route that is not a string', { ...routed, route: 7 }],
    ['passedOver that is not a list', { ...routed, passedOver: 'on-device' }],
    ['a passed-over route without a name', { ...routed, passedOver: [{ reason: 'declined' }] }],
    [
      'a passed-over error without a code',
      { ...routed, passedOver: [{ route: 'a', reason: 'failed', error: { message: 'x' } }] },
    ],
    [
      'a huge passedOver',
      {
        ...routed,
        passedOver: Array.from({ length: 1_000 }, () => ({ route: 'a', reason: 'declined' })),
      },
    ],
    ['no step', { type: 'model-route', route: 'a', passedOver: [] }],
  ])('is refused from another tab with %s', (_, event) => {
    expect(relayed(event)).toMatchObject({ ok: false });
  });

  it('reaches the AI SDK transport as a transient data part', () => {
    const mapper = new EventChunkMapper('run-1');
    mapper.open(false, 'm1');
    expect(mapper.map(routed)).toEqual([
      {
        type: 'data-model-route',
        data: { step: 2, route: 'cloud', passedOver: routed.passedOver },
        transient: true,
      },
    ]);
  });
});
