import { type AirlockError, createAgent, isAirlockError } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { agentFor, collect, scriptModel } from './support';

describe('agent lifecycle', () => {
  it('refuses a second run on the same conversation while one is going on, with conversation-busy', async () => {
    const session = await scriptModel([{ text: 'slow answer '.repeat(20), chunkDelayMs: 10 }]);
    const agent = agentFor(session);
    const first = agent.run('First');
    const second = agent.run('Second');

    await expect(second.result).rejects.toMatchObject({ code: 'conversation-busy' });
    expect((await first.result).reason).toBe('stop');
    expect(await session.requests()).toHaveLength(1);
  });

  it("lets a run refused before it starts neither keep the conversation's lock nor free another's", async () => {
    // Slow enough (about 2 s) for two more runs to be refused while it streams, on a busy machine too.
    const session = await scriptModel([
      { text: 'slow answer '.repeat(50), chunkDelayMs: 20 },
      { text: 'Answered.' },
    ]);
    const agent = agentFor(session, {
      guardrails: {
        input: (input) =>
          input.startsWith('Refuse')
            ? { action: 'block', reason: 'Refused.' }
            : { action: 'allow' },
      },
    });
    const first = agent.run('First');
    let streaming: () => void = () => {};
    const streamed = new Promise<void>((resolve) => {
      streaming = resolve;
    });
    const read = (async () => {
      for await (const event of first) if (event.type === 'text-delta') streaming();
    })();
    await streamed;

    // Refused while the first run holds the lock.
    await expect(agent.run('Refuse me').result).rejects.toMatchObject({
      code: 'guardrail-blocked',
    });
    // The first run's lock is still held.
    await expect(agent.run('Third').result).rejects.toMatchObject({ code: 'conversation-busy' });
    await read;
    expect((await first.result).reason).toBe('stop');
    // Refused with the conversation free, then a run at once: the conversation is free.
    await expect(agent.run('Refuse me too').result).rejects.toMatchObject({
      code: 'guardrail-blocked',
    });
    expect((await agent.run('Fourth').result).text).toBe('Answered.');
    expect(await session.requests()).toHaveLength(2);
  });

  it('ends a running run with agent-disposed, and dispose can be called twice', async () => {
    const session = await scriptModel([{ text: 'slow answer '.repeat(50), chunkDelayMs: 20 }]);
    const agent = agentFor(session);
    const run = agent.run('Hello');
    for await (const event of run) {
      if (event.type === 'text-delta') break;
    }
    const late = agent.run('Too late?');
    agent.dispose();
    agent.dispose();

    expect(agent.disposed).toBe(true);
    await expect(late.result).rejects.toMatchObject({ code: 'agent-disposed' });
    await expect(agent.run('After').result).rejects.toMatchObject({ code: 'agent-disposed' });
  });

  it('ends everything when disposed in the same task as createAgent: the run, ready, memory calls, and the worker', async () => {
    const session = await scriptModel([{ text: 'Never sent.' }]);
    let worker: Worker | undefined;
    const agent = createAgent({
      worker: () => {
        worker = new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), {
          type: 'module',
        });
        return worker;
      },
      model: { baseURL: session.baseURL, model: 'airlock-test-model' },
    });
    const run = agent.run('Hello');
    agent.dispose();

    await expect(run.result).rejects.toMatchObject({ code: 'agent-disposed' });
    await expect(agent.ready).rejects.toMatchObject({ code: 'agent-disposed' });
    await expect(agent.memory.listRuns()).rejects.toMatchObject({ code: 'agent-disposed' });
    // The worker ends within the close grace (1 s): it answers nothing afterwards.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const answered = await Promise.race([
      new Promise((resolve) => {
        worker?.addEventListener('message', () => resolve('answered'));
        worker?.postMessage({ id: 'probe', type: 'GET', path: ['x'] });
      }),
      new Promise((resolve) => setTimeout(() => resolve('silent'), 1_000)),
    ]);
    expect(answered).toBe('silent');
    expect(await session.requests()).toHaveLength(0);
  });

  it('reports a worker that fails to load as worker-load-failed', async () => {
    const agent = createAgent({
      worker: () =>
        new Worker(new URL('./fixtures/broken.worker.ts', import.meta.url), { type: 'module' }),
      model: { baseURL: 'http://127.0.0.1:9/v1', model: 'any' },
    });
    try {
      const events = await collect(agent.run('Hello'));
      expect(events).toEqual([
        expect.objectContaining({
          type: 'run-error',
          error: expect.objectContaining({ code: 'worker-load-failed' }),
        }),
      ]);
    } finally {
      agent.dispose();
    }
  });

  it('fails ready with invalid-options naming the first field the worker could not use, before starting it', async () => {
    let started = 0;
    const agent = createAgent({
      worker: () => {
        started += 1;
        return new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), {
          type: 'module',
        });
      },
      model: { baseURL: 'http://127.0.0.1:9/v1', model: '', maxRetries: -1 },
    });
    const error = await agent.ready.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    agent.dispose();
    expect(isAirlockError(error, 'invalid-options')).toBe(true);
    expect((error as AirlockError).message).toContain('`model.model`');
    expect((error as AirlockError).details).toEqual({ field: 'model.model' });
    expect(started).toBe(0);
  });

  it('fails ready with invalid-options for a base URL that cannot be resolved or a worker that is no factory', async () => {
    const worker = () =>
      new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), { type: 'module' });
    const unresolvable = createAgent({ worker, model: { baseURL: 'http://[bad', model: 'm' } });
    await expect(unresolvable.ready).rejects.toMatchObject({
      code: 'invalid-options',
      details: { field: 'model.baseURL' },
    });
    const noFactory = createAgent({
      worker: 'nope' as unknown as () => Worker,
      model: { baseURL: '/v1', model: 'm' },
    });
    await expect(noFactory.ready).rejects.toThrow(/worker/);
    unresolvable.dispose();
    noFactory.dispose();
  });

  it('delivers every event of a long run to a reader slower than the worker', async () => {
    const words = Array.from({ length: 1_500 }, (_, i) => `w${i}`);
    const session = await scriptModel([{ text: words.join(' ') }]);
    const agent = agentFor(session);
    const run = agent.run('Stream a lot');

    let text = '';
    let deltas = 0;
    for await (const event of run) {
      if (event.type !== 'text-delta') continue;
      text += event.delta;
      // Pause now and then, so the worker outruns the reader and must wait for credit.
      if (++deltas % 300 === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }

    expect(deltas).toBe(words.length);
    expect(text).toBe(words.join(' '));
  });
});
