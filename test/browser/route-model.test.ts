import { createAgent } from 'airlock-agents';
import { describe, expect, it, onTestFinished } from 'vitest';
import { collect, scriptModel, WORKER_START_MS } from './support';

describe('route([...]) as the agent worker’s model', () => {
  it('falls back to the second endpoint when the first answers 500, and the run says so', async () => {
    const primary = await scriptModel([{ status: 500, message: 'The primary fell over.' }]);
    const fallback = await scriptModel([{ text: 'Answered by the fallback.' }]);
    const agent = createAgent({
      worker: () =>
        new Worker(new URL('./fixtures/route-model.worker.ts', import.meta.url), {
          type: 'module',
        }),
      model: {
        model: 'airlock-test-model',
        baseURL: primary.baseURL,
        headers: { 'x-test-fallback': fallback.baseURL },
        maxRetries: 0,
      },
      memory: { database: `route-model-${crypto.randomUUID()}`, tools: false },
      startTimeoutMs: WORKER_START_MS,
    });
    onTestFinished(() => agent.dispose());

    const run = agent.run('Hello?');
    const events = await collect(run);
    const result = await run.result;

    expect(result).toMatchObject({ reason: 'stop', text: 'Answered by the fallback.' });
    const routed = events.filter((event) => event.type === 'model-route');
    expect(routed).toEqual([
      {
        type: 'model-route',
        step: 1,
        route: 'fallback',
        passedOver: [
          {
            route: 'primary',
            reason: 'failed',
            error: expect.objectContaining({
              code: 'model-http-error',
              details: expect.objectContaining({ status: 500 }),
            }),
          },
        ],
      },
    ]);
    // Told before the step's first text.
    const types = events.map((event) => event.type);
    expect(types.indexOf('model-route')).toBeLessThan(types.indexOf('text-delta'));
    expect(await primary.requests()).toHaveLength(1);
    const [sent] = await fallback.requests();
    expect(await fallback.requests()).toHaveLength(1);
    // The header that named the fallback was for the worker only.
    expect(JSON.stringify(sent?.headers ?? {})).not.toContain('x-test-fallback');
  });
});
