import { type AgentEvent, createAgent } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import {
  agentFor,
  collect,
  KILL_MARGIN_MS,
  readToolOutput,
  receivedBodies,
  scriptModel,
  testToolsWorker,
} from './support';

type ToolResult = Extract<AgentEvent, { type: 'tool-result' }>;
const results = (events: AgentEvent[]) =>
  events.filter((event): event is ToolResult => event.type === 'tool-result');
const GRACE_MS = 100;

/** Starts test tool workers that call `onSpinning` when their `spin_long` starts. */
const toolsWorkerTelling = (onSpinning: () => void) => () => {
  const worker = testToolsWorker();
  worker.addEventListener('message', (event) => {
    if (event.data === 'spinning') onSpinning();
  });
  return worker;
};

describe('sandboxed tools', () => {
  it('kills a tool stuck in while(true) at its deadline, replaces its worker, and the run completes', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_spin', name: 'spin', arguments: {} }] },
      { toolCalls: [{ id: 'call_echo', name: 'echo', arguments: { text: 'still alive' } }] },
      { text: 'Done despite the spinner.' },
    ]);
    const agent = agentFor(session, {
      toolsets: [
        {
          name: 'test',
          worker: testToolsWorker,
          poolSize: 1,
          maxConcurrency: 1,
          graceMs: GRACE_MS,
        },
      ],
    });
    await agent.ready;
    // The policy worker (describes and checks, never runs a tool) and one fresh worker.
    expect(agent.sandboxStats().test).toEqual({ live: 2, started: 2, killed: 0 });

    const run = agent.run('Spin, then echo');
    const events = await collect(run);
    const [spin, echo] = results(events);

    expect(spin).toMatchObject({ callId: 'call_spin', ok: false, error: { code: 'tool-timeout' } });
    expect(spin?.durationMs).toBeGreaterThanOrEqual(200);
    expect(spin?.durationMs).toBeLessThanOrEqual(200 + GRACE_MS + KILL_MARGIN_MS);
    expect(echo).toMatchObject({ callId: 'call_echo', ok: true, output: 'still alive' });
    expect((await run.result).text).toBe('Done despite the spinner.');
    // The spinner was terminated at its deadline and the echo's worker when its run ended
    // (`reuse: 'run'`); a fresh worker took the place of each, and the policy worker stays.
    await expect.poll(() => agent.sandboxStats().test).toEqual({ live: 2, started: 4, killed: 2 });
    const timeoutMessage = (await receivedBodies(session))[1]?.messages.at(-1);
    expect(readToolOutput(timeoutMessage?.content).status).toBe('error');
    expect(timeoutMessage?.content).toContain(
      'did not finish within 200 ms; its worker was killed',
    );
  });

  it('kills a spinning tool when its run is aborted, after the grace period, not at its deadline', async () => {
    const session = await scriptModel([{ toolCalls: [{ name: 'spin_long', arguments: {} }] }]);
    let spinning = () => {};
    const agent = agentFor(session, {
      toolsets: [{ name: 'test', worker: toolsWorkerTelling(() => spinning()), graceMs: GRACE_MS }],
    });
    const run = agent.run('Spin for a minute');
    spinning = () => run.abort();
    await collect(run);

    expect((await run.result).reason).toBe('aborted');
    // The deadline is 60 s away; the kill comes once the grace after the abort has passed.
    await expect
      .poll(() => agent.sandboxStats().test?.killed, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(1);
  });

  it('never runs a call whose run was aborted while it waited for a worker, and leaves no worker behind', async () => {
    const session = await scriptModel([{ toolCalls: [{ name: 'spin_long', arguments: {} }] }]);
    // No warm worker: the call has to wait for one to start, and the abort comes meanwhile.
    let spun = false;
    const worker = toolsWorkerTelling(() => {
      spun = true;
    });
    const agent = agentFor(session, {
      toolsets: [{ name: 'test', worker, poolSize: 0, graceMs: GRACE_MS }],
    });
    const run = agent.run('Spin for a minute');
    for await (const event of run) if (event.type === 'tool-call') run.abort();

    expect((await run.result).reason).toBe('aborted');
    // Only the policy worker stays: the aborted call's worker, if it got one, went with its run.
    await expect.poll(() => agent.sandboxStats().test?.live, { timeout: 5_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(spun).toBe(false);
  });

  it('refills the pool after a kill without waiting for the next call', async () => {
    const session = await scriptModel([
      { toolCalls: [{ name: 'spin', arguments: {} }] },
      { text: 'Gave up.' },
    ]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'test', worker: testToolsWorker, poolSize: 1, graceMs: GRACE_MS }],
    });

    await agent.run('Spin').result;

    // The spinner's worker was killed and a fresh one started in its place, beside the policy worker.
    await expect.poll(() => agent.sandboxStats().test).toEqual({ live: 2, started: 3, killed: 1 });
  });

  it('keeps a worker whose tool honours its signal within the grace period', async () => {
    const session = await scriptModel([
      { toolCalls: [{ name: 'polite_hang', arguments: {} }] },
      { text: 'ok' },
    ]);
    // Reused by the conversation, so the end of the run does not stop the worker either.
    const agent = agentFor(session, {
      toolsets: [
        { name: 'test', worker: testToolsWorker, graceMs: GRACE_MS, reuse: 'conversation' },
      ],
    });

    const [result] = results(await collect(agent.run('Hang politely')));

    expect(result).toMatchObject({
      ok: false,
      error: { code: 'tool-timeout', message: expect.stringContaining('cancelled') },
    });
    expect(agent.sandboxStats().test).toMatchObject({ killed: 0 });
  });

  it('turns a never-settling promise, a thrown string, an uncloneable result and 50 MB of text into tool messages', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_hang', name: 'hang', arguments: {} },
          { id: 'call_throw', name: 'throw_string', arguments: {} },
          { id: 'call_fn', name: 'return_function', arguments: {} },
          { id: 'call_huge', name: 'huge', arguments: {} },
        ],
      },
      { text: 'Handled all four.' },
    ]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'test', worker: testToolsWorker, graceMs: GRACE_MS }],
    });
    const run = agent.run('Misbehave');

    const byCall = Object.fromEntries(
      results(await collect(run)).map((result) => [result.callId, result]),
    );

    expect(byCall.call_hang).toMatchObject({ ok: false, error: { code: 'tool-timeout' } });
    expect(byCall.call_throw).toMatchObject({
      ok: false,
      error: { code: 'tool-failed', message: 'Tool "throw_string" failed: a plain string' },
    });
    expect(byCall.call_fn).toMatchObject({
      ok: false,
      error: { code: 'tool-output-not-serializable' },
    });
    const huge = byCall.call_huge;
    expect(huge?.ok).toBe(true);
    const hugeOutput = huge?.ok ? String(huge.output) : '';
    expect(hugeOutput.length).toBeLessThan(1_200);
    expect(hugeOutput).toContain(
      `[output truncated: showing the first 1000 of ${50 * 1024 * 1024} characters]`,
    );
    expect((await run.result).text).toBe('Handled all four.');
    const toolMessages = (await receivedBodies(session))[1]?.messages.filter(
      (message) => message.role === 'tool',
    );
    expect(toolMessages?.map((message) => message.tool_call_id)).toEqual([
      'call_hang',
      'call_throw',
      'call_fn',
      'call_huge',
    ]);
  });

  it('runs three parallel calls of a 400 ms tool concurrently and returns results in call order', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_a', name: 'sleep', arguments: { ms: 400 } },
          { id: 'call_b', name: 'sleep', arguments: { ms: 400 } },
          { id: 'call_c', name: 'sleep', arguments: { ms: 400 } },
        ],
      },
      { text: 'Slept three times.' },
    ]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'test', worker: testToolsWorker, poolSize: 3 }],
    });
    await agent.ready;

    let firstCall = 0;
    let lastResult = 0;
    for await (const event of agent.run('Sleep thrice')) {
      if (event.type === 'tool-call' && firstCall === 0) firstCall = performance.now();
      if (event.type === 'tool-result') lastResult = performance.now();
    }

    // One after another they would take 1 200 ms at least; together about 400, and the
    // rest of the bound is room for a busy machine.
    expect(lastResult - firstCall).toBeLessThan(1_000);
    const replay = (await receivedBodies(session))[1]?.messages.filter(
      (message) => message.role === 'tool',
    );
    expect(replay?.map((message) => message.tool_call_id)).toEqual(['call_a', 'call_b', 'call_c']);
    expect(replay?.map((message) => JSON.parse(readToolOutput(message.content).body))).toEqual([
      { slept: 400 },
      { slept: 400 },
      { slept: 400 },
    ]);
  });

  it('fails ready with toolset-unavailable when the tool worker never serves its tools', async () => {
    const agent = createAgent({
      worker: () =>
        new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), { type: 'module' }),
      model: { baseURL: 'http://127.0.0.1:9/v1', model: 'any' },
      toolsets: [
        {
          name: 'silent',
          worker: () =>
            new Worker(new URL('./fixtures/silent-tools.worker.ts', import.meta.url), {
              type: 'module',
            }),
          startTimeoutMs: 300,
        },
      ],
    });
    try {
      await expect(agent.ready).rejects.toMatchObject({ code: 'toolset-unavailable' });
      await expect(agent.run('Hello').result).rejects.toMatchObject({
        code: 'toolset-unavailable',
      });
      // The policy worker and the pool's one worker both timed out and were killed.
      expect(agent.sandboxStats().silent).toMatchObject({ live: 0, killed: 2 });
    } finally {
      agent.dispose();
    }
  });

  it('terminates every tool worker when the agent is disposed', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'test', worker: testToolsWorker, poolSize: 2 }],
    });
    await agent.ready;
    // Two fresh workers and the policy worker.
    await expect.poll(() => agent.sandboxStats().test?.live).toBe(3);

    agent.dispose();

    expect(agent.sandboxStats().test?.live).toBe(0);
  });
});
