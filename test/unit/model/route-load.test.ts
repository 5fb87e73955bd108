import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../../src/errors/airlock-error';
import type { ChatModel } from '../../../src/model/chat-model';
import { route } from '../../../src/model/route-model';
import type { ModelLoadProgress } from '../../../src/protocol/model-load';
import { model, text, usage } from './route-fixtures';

/** A model that reports loading through `onLoad`, then answers or fails `model-unavailable`. */
function loadingModel(name: string, fails: boolean): ChatModel {
  return {
    name,
    async *stream(_request, options) {
      await options.onLoad?.({ model: name, phase: 'checking' });
      if (fails) throw new AirlockError('model-unavailable', `${name} is not on this device.`);
      await options.onLoad?.({ model: name, phase: 'downloading', fraction: 0.5 });
      await options.onLoad?.({ model: name, phase: 'ready' });
      yield { type: 'text-delta', delta: `${name} answers` };
      yield { type: 'finish', finishReason: 'stop' };
      yield { type: 'usage', usage };
    },
    async complete() {
      return { text: `${name} answers`, usage };
    },
  };
}

async function streamWithLoad(router: ChatModel) {
  const loads: ModelLoadProgress[] = [];
  let answer = '';
  for await (const part of router.stream(text('Hi'), {
    signal: new AbortController().signal,
    idleTimeoutMs: 1_000,
    onLoad: (progress) => {
      loads.push(progress);
    },
  }))
    if (part.type === 'text-delta') answer += part.delta;
  return { loads, answer };
}

describe('route: load progress', () => {
  it('passes onLoad on to the route it calls, so its progress reaches the caller', async () => {
    const { loads, answer } = await streamWithLoad(route([{ model: loadingModel('nano', false) }]));
    expect(answer).toBe('nano answers');
    expect(loads.map((load) => load.phase)).toEqual(['checking', 'downloading', 'ready']);
    expect(loads[1]).toEqual({ model: 'nano', phase: 'downloading', fraction: 0.5 });
  });

  it('falls back when a route checked and found its model unavailable, keeping what it told', async () => {
    const cloud = model('cloud');
    const { loads, answer } = await streamWithLoad(
      route([{ model: loadingModel('nano', true) }, { model: cloud }]),
    );
    expect(answer).toBe('cloud answers');
    expect(loads).toEqual([{ model: 'nano', phase: 'checking' }]);
    expect(cloud.calls).toHaveLength(1);
  });
});
