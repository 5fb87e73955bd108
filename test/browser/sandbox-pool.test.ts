import type { AgentEvent } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { agentFor, collect, scriptModel, testToolsWorker } from './support';

type ToolResult = Extract<AgentEvent, { type: 'tool-result' }>;
const results = (events: AgentEvent[]) =>
  events.filter((event): event is ToolResult => event.type === 'tool-result');

/** `count` sleep calls in one step: a burst that needs more workers than the pool keeps warm. */
const sleeps = (count: number, ms: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: `call_sleep_${i}`,
    name: 'sleep',
    arguments: { ms },
  }));

describe('sandbox pool after a burst', () => {
  it('shrinks back to the pool and one worker for the conversation once a burst settles', async () => {
    const session = await scriptModel([
      { toolCalls: sleeps(6, 150) },
      { text: 'Slept six times.' },
      { toolCalls: [{ id: 'call_echo', name: 'echo', arguments: { text: 'again' } }] },
      { text: 'Echoed.' },
    ]);
    const agent = agentFor(session, {
      toolsets: [
        {
          name: 'test',
          worker: testToolsWorker,
          reuse: 'conversation',
          poolSize: 1,
          maxConcurrency: 4,
        },
      ],
    });
    await agent.ready;

    const burst = results(await collect(agent.run('Sleep six times')));
    expect(burst.map((result) => result.ok)).toEqual([true, true, true, true, true, true]);
    // The policy worker, the pool's fresh one, and the one worker the conversation keeps;
    // the other workers the burst started are gone.
    await expect.poll(() => agent.sandboxStats().test?.live).toBe(3);
    const afterBurst = agent.sandboxStats().test;
    // Four calls ran at once, each in a worker of its own, besides the policy worker.
    expect(afterBurst?.started).toBeGreaterThanOrEqual(5);

    // The conversation's next call takes the worker it kept: nothing new is started.
    const [echo] = results(await collect(agent.run('Echo')));
    expect(echo).toMatchObject({ callId: 'call_echo', ok: true, output: 'again' });
    expect(agent.sandboxStats().test).toEqual(afterBurst);
  });

  it('shrinks back when a call of the burst is killed at its deadline while the others return', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_spin', name: 'spin', arguments: {} },
          ...sleeps(3, 50),
          { id: 'call_echo', name: 'echo', arguments: { text: 'alive' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, {
      toolsets: [
        {
          name: 'test',
          worker: testToolsWorker,
          reuse: 'conversation',
          poolSize: 2,
          maxConcurrency: 5,
          graceMs: 50,
        },
      ],
    });
    await agent.ready;

    const burst = results(await collect(agent.run('Spin among others')));
    const spin = burst.find((result) => result.callId === 'call_spin');
    expect(spin).toMatchObject({
      callId: 'call_spin',
      ok: false,
      error: { code: 'tool-timeout' },
    });
    expect(burst.filter((result) => result !== spin).map((result) => result.ok)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    // The policy worker, two fresh ones, one for the conversation; the spinner was killed.
    await expect.poll(() => agent.sandboxStats().test?.live).toBe(4);
    const stats = agent.sandboxStats().test;
    expect(stats?.killed).toBeGreaterThanOrEqual(4);
    expect((stats?.started ?? 0) - (stats?.killed ?? 0)).toBe(4);
  });

  it('starts no tool worker once the agent is disposed during a burst, and leaves none alive', async () => {
    const session = await scriptModel([{ toolCalls: sleeps(8, 200) }, { text: 'Never read.' }]);
    const agent = agentFor(session, {
      toolsets: [
        // Every call in a new worker, two at a time: the burst keeps starting workers.
        { name: 'test', worker: testToolsWorker, reuse: 'call', poolSize: 0, maxConcurrency: 2 },
      ],
    });
    await agent.ready;

    const run = agent.run('Sleep eight times');
    const events: AgentEvent[] = [];
    for await (const event of run) {
      events.push(event);
      // The first call settled: the burst is under way and its next calls are starting.
      if (event.type === 'tool-result' && results(events).length === 1) agent.dispose();
    }
    // The call running beside the first may settle in the same delivery; none started after.
    expect(results(events).length).toBeLessThanOrEqual(2);
    expect(events.at(-1)).toMatchObject({ type: 'run-error', error: { code: 'agent-disposed' } });
    await expect(run.result).rejects.toMatchObject({ code: 'agent-disposed' });
    expect(agent.sandboxStats().test?.live).toBe(0);
    const { started } = agent.sandboxStats().test ?? { started: 0 };
    // Longer than the rest of the burst would take: no worker was started after the dispose.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(agent.sandboxStats().test).toMatchObject({ live: 0, started });
  });

  it('starts no tool worker when the agent is disposed before its sandbox host has loaded', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'test', worker: testToolsWorker, poolSize: 2 }],
    });
    // Before the host's module has loaded the toolset has no worker, and says so.
    expect(agent.sandboxStats()).toEqual({ test: { live: 0, started: 0, killed: 0 } });
    agent.dispose();
    await expect(agent.ready).rejects.toMatchObject({ code: 'agent-disposed' });
    // Time for the module to load and for a host that ignored the dispose to start its pool.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(agent.sandboxStats().test?.live ?? 0).toBe(0);
  });
});
