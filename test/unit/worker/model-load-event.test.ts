import type { AgentEvent } from 'airlock-agents';
import { EventChunkMapper } from 'airlock-agents/ai-sdk';
import { describe, expect, it } from 'vitest';
import { parseRelayMessage } from '../../../src/worker/tabs/relay-schema';

const loading: AgentEvent = {
  type: 'model-load',
  step: 1,
  model: 'nano',
  phase: 'downloading',
  fraction: 0.25,
};

const relayed = (event: unknown) =>
  parseRelayMessage({ kind: 'events', source: 'tab-1', runId: 'run-1', seq: 0, events: [event] });

describe('the model-load event', () => {
  it('is relayed to watching tabs as it was sent', () => {
    const ready: AgentEvent = {
      type: 'model-load',
      step: 2,
      model: 'wasm',
      phase: 'ready',
      cached: true,
      loadedBytes: 10,
      totalBytes: 10,
    };
    for (const event of [loading, ready])
      expect(relayed(event)).toEqual({
        ok: true,
        message: expect.objectContaining({ events: [event] }),
      });
  });

  it.each([
    ['an unknown phase', { ...loading, phase: 'compiling' }],
    ['a fraction over 1', { ...loading, fraction: 1.5 }],
    ['negative bytes', { ...loading, loadedBytes: -1 }],
    ['a model that is not a string', { ...loading, model: 7 }],
    ['a huge model name', { ...loading, model: 'x'.repeat(10_000) }],
    ['cached that is not a boolean', { ...loading, cached: 'yes' }],
    ['no step', { type: 'model-load', model: 'nano', phase: 'ready' }],
  ])('is refused from another tab with %s', (_, event) => {
    expect(relayed(event)).toMatchObject({ ok: false });
  });

  it('reaches the AI SDK transport as a transient data part', () => {
    const mapper = new EventChunkMapper('run-1');
    mapper.open(false, 'm1');
    expect(mapper.map(loading)).toEqual([
      {
        type: 'data-model-load',
        data: { step: 1, model: 'nano', phase: 'downloading', fraction: 0.25 },
        transient: true,
      },
    ]);
  });
});
