import { type AgentEvent, type AgentRun, isAirlockError, tool } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { commands } from 'vitest/browser';
import { z } from 'zod';
import { agentFor, collect, receivedBodies, scriptModel } from './support';

declare module 'vitest/browser' {
  interface BrowserCommands {
    /** Offline for `ms`, then online again; false where the provider cannot (see test/setup/network.mjs). */
    goOffline: (ms: number) => Promise<boolean>;
  }
}

/** Resolves once `check` holds, polling; fails after `ms` (generous: a busy machine is slow). */
async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The error code a run's result rejects with, or `resolved`. */
async function outcomeOf(run: AgentRun): Promise<string> {
  try {
    await run.result;
    return 'resolved';
  } catch (error) {
    return isAirlockError(error) ? error.code : String(error);
  }
}

describe('a run that loses the network', () => {
  // In Chromium, Playwright's setOffline reaches the agent worker as `navigator.onLine` false
  // (with no `online`/`offline` events in the worker, and its fetches not blocked), so the wait
  // ends through the periodic re-check. The Firefox and WebKit providers drive the browser over
  // WebDriver, which has no offline switch that reaches a worker (puppeteer's setOfflineMode
  // over BiDi was tried in Firefox 153 ESR: the agent worker stayed online and its request went
  // through), so there the command answers false and these tests are skipped; the wait's logic
  // is covered in every case by test/unit/model/network-wait.test.ts.
  it('waits for the network before step 2, then finishes with each tool run once', async (context) => {
    const session = await scriptModel([
      { toolCalls: [{ name: 'lookup', arguments: { q: 'train' } }] },
      { text: 'Back online: the train is on time.' },
    ]);
    let lookups = 0;
    let offline: Promise<boolean> | undefined;
    const lookup = tool({
      name: 'lookup',
      description: 'Looks something up.',
      parameters: z.object({ q: z.string() }),
      execute: async () => {
        lookups++;
        // The tunnel starts while the tool runs: step 2's model call meets it.
        offline = commands.goOffline(3_000);
        const reached = await Promise.race([
          until(() => !navigator.onLine, 'the browser to go offline', 5_000).then(() => true),
          offline.then(() => false),
        ]);
        return { reached, status: 'on time' };
      },
    });
    const agent = agentFor(session, { tools: [lookup], limits: { networkWaitMs: 30_000 } });
    const run = agent.run('Is my train on time?');
    const events = await collect(run);
    const supported = await offline;
    if (!supported) context.skip('this provider cannot take the browser offline');

    const result = await run.result;
    expect(result.reason).toBe('stop');
    expect(result.text).toBe('Back online: the train is on time.');
    expect(events).toContainEqual({
      type: 'waiting-for-network',
      step: 2,
      reason: 'offline',
      maxWaitMs: 30_000,
    });
    const waitAt = events.findIndex((event) => event.type === 'waiting-for-network');
    const firstText = events.findIndex((event) => event.type === 'text-delta');
    expect(waitAt).toBeGreaterThan(-1);
    expect(firstText).toBeGreaterThan(waitAt);
    expect(lookups).toBe(1);
    // One request per step: nothing was sent (or retried) while offline, no step repeated.
    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]?.messages.filter((message) => message.role === 'tool')).toHaveLength(1);
    const audit = await agent.memory.toolCalls({ runId: result.runId });
    expect(audit.map((call) => [call.toolName, call.outcome])).toEqual([['lookup', 'ok']]);
  }, 60_000);

  it('asks again for a step whose stream was cut while offline, once the network is back', async (context) => {
    const session = await scriptModel([
      // Slow enough that the browser is offline before the connection drops.
      {
        text: 'One two three four five six',
        chunkDelayMs: 700,
        fault: { kind: 'cut', afterChunks: 4 },
      },
      { text: 'Back.' },
    ]);
    const agent = agentFor(session, { limits: { networkWaitMs: 30_000 } });
    const run = agent.run('Count');
    const events: AgentEvent[] = [];
    let offline: Promise<boolean> | undefined;
    for await (const event of run) {
      events.push(event);
      if (event.type === 'text-delta' && !offline) offline = commands.goOffline(5_000);
    }
    if (!(await offline)) context.skip('this provider cannot take the browser offline');

    expect((await run.result).text).toBe('Back.');
    const restartAt = events.findIndex((event) => event.type === 'step-restarted');
    const waitAt = events.findIndex((event) => event.type === 'waiting-for-network');
    expect(restartAt).toBeGreaterThan(-1);
    expect(events[waitAt]).toMatchObject({ step: 1, reason: 'offline', maxWaitMs: 30_000 });
    expect(waitAt).toBeGreaterThan(restartAt);
    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]?.messages).toEqual(bodies[0]?.messages);
  }, 60_000);

  it('fails model-unreachable once limits.networkWaitMs has passed offline', async (context) => {
    const session = await scriptModel([
      { toolCalls: [{ name: 'lookup', arguments: { q: 'tunnel' } }] },
      { text: 'never sent' },
    ]);
    let offline: Promise<boolean> | undefined;
    const lookup = tool({
      name: 'lookup',
      description: 'Looks something up.',
      parameters: z.object({ q: z.string() }),
      execute: async () => {
        offline = commands.goOffline(4_000);
        await Promise.race([until(() => !navigator.onLine, 'offline', 5_000), offline]);
        return 'ok';
      },
    });
    const agent = agentFor(session, { tools: [lookup], limits: { networkWaitMs: 1_000 } });
    const run = agent.run('Look it up');
    const events = await collect(run);
    if (!(await offline)) context.skip('this provider cannot take the browser offline');
    expect(await outcomeOf(run)).toBe('model-unreachable');
    const error = events.at(-1);
    expect(error).toMatchObject({
      type: 'run-error',
      error: { code: 'model-unreachable', details: { offline: true } },
    });
    expect(await receivedBodies(session)).toHaveLength(1);
  }, 60_000);
});

describe('resuming an interrupted run', () => {
  /** Two tools: `fast` settles at once, `slow` runs until the test lets it go. */
  function tools() {
    const runs = { fast: 0, slow: 0 };
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fast = tool({
      name: 'fast',
      description: 'Answers at once.',
      parameters: z.object({}),
      execute: () => {
        runs.fast++;
        return 'fast done';
      },
    });
    const slow = tool({
      name: 'slow',
      description: 'Takes its time.',
      parameters: z.object({}),
      execute: async () => {
        runs.slow++;
        await released;
        return 'slow done';
      },
    });
    return { runs, list: [fast, slow], release };
  }

  it('finishes a step cut by a closed tab: a settled call is reused, a started one is never run again', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      {
        toolCalls: [
          { name: 'fast', arguments: {} },
          { name: 'slow', arguments: {} },
        ],
      },
      { text: 'Both handled.' },
    ]);
    const { runs, list, release } = tools();
    const closing = agentFor(session, { conversationId, tools: list, memory: { database } });
    const first: AgentEvent[] = [];
    for await (const event of closing.run('Do both')) {
      first.push(event);
      // The tab closes while `slow` runs, after `fast` settled.
      if (event.type === 'tool-result' && event.toolName === 'fast') {
        await until(() => runs.slow === 1, 'slow to start');
        closing.dispose();
      }
    }
    release();
    expect(first.at(-1)).toMatchObject({ type: 'run-error', error: { code: 'agent-disposed' } });
    const runId = first.find((event) => event.type === 'run-start')?.runId ?? '';

    const reopened = agentFor(session, { conversationId, tools: list, memory: { database } });
    const [interrupted] = await reopened.memory.listRuns({ statuses: ['interrupted'] });
    expect(interrupted?.id).toBe(runId);
    const resumed = reopened.resume(runId);
    const events = await collect(resumed);
    const result = await resumed.result;

    expect(result.reason).toBe('stop');
    expect(result.text).toBe('Both handled.');
    expect(runs).toEqual({ fast: 1, slow: 1 });
    expect(
      events.filter((event) => event.type === 'tool-result').map((event) => event.toolName),
    ).toEqual(['slow']);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'tool-result',
        toolName: 'slow',
        ok: false,
        error: expect.objectContaining({ code: 'tool-interrupted' }),
      }),
    );
    // The audit log: each call once, however many times the run was picked up.
    const audit = await reopened.memory.toolCalls({ runId });
    expect(audit.map((call) => [call.toolName, call.outcome]).sort()).toEqual([
      ['fast', 'ok'],
      ['slow', 'tool-interrupted'],
    ]);
    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]?.messages.filter((message) => message.role === 'tool')).toHaveLength(2);
    expect((await reopened.memory.listRuns({ conversationId }))[0]?.status).toBe('finished');
  }, 60_000);

  it('streams again the step that was cut, with its partial text kept out of the request', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ name: 'fast', arguments: {} }] },
      { text: 'Half an answer that never ends', fault: { kind: 'stall', afterChunks: 3 } },
      { text: 'The whole answer.' },
    ]);
    const { runs, list } = tools();
    const closing = agentFor(session, {
      conversationId,
      tools: list,
      memory: { database },
      limits: { streamIdleTimeoutMs: 60_000 },
    });
    let runId = '';
    let disposed = false;
    for await (const event of closing.run('Answer me')) {
      if (event.type === 'run-start') runId = event.runId;
      // The worker goes away mid-answer of step 2, once its text was saved (a second after
      // its first delta, however the stream stalls).
      if (event.type === 'text-delta' && event.step === 2 && !disposed) {
        disposed = true;
        const savedText = async () =>
          (await closing.memory.listRuns({ conversationId }))[0]?.partialText ?? '';
        await expect.poll(savedText, { timeout: 15_000 }).toContain('Half');
        closing.dispose();
      }
    }

    const reopened = agentFor(session, { conversationId, tools: list, memory: { database } });
    const result = await reopened.resume(runId).result;
    expect(result.text).toBe('The whole answer.');
    expect(result.steps.map((step) => step.step)).toEqual([2]);
    expect(runs.fast).toBe(1);
    const bodies = await receivedBodies(session);
    expect(bodies).toHaveLength(3);
    const resent = bodies[2]?.messages ?? [];
    expect(resent.filter((message) => message.role === 'tool')).toHaveLength(1);
    expect(JSON.stringify(resent)).not.toContain('Half an answer');
    const audit = await reopened.memory.toolCalls({ runId });
    expect(audit.map((call) => call.toolName)).toEqual(['fast']);
    // Shown as interrupted, answered once.
    const stored = await reopened.memory.getConversation(conversationId);
    expect(
      stored?.messages.map((message) => [
        message.message.role,
        message.status,
        message.message.content,
      ]),
    ).toEqual([
      ['user', 'complete', 'Answer me'],
      ['assistant', 'complete', null],
      ['tool', 'complete', expect.stringContaining('fast done')],
      ['assistant', 'interrupted', expect.stringContaining('Half')],
      ['assistant', 'complete', 'The whole answer.'],
    ]);
  }, 60_000);

  it('refuses an unknown id, a finished run and a run another tab is running, with typed errors', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      { text: 'done' },
      { text: 'slow answer', fault: { kind: 'stall', afterChunks: 2 } },
    ]);
    const agent = agentFor(session, { conversationId, memory: { database } });
    const finished = await agent.run('Hi').result;

    expect(await outcomeOf(agent.resume(`run_${crypto.randomUUID()}`))).toBe('not-found');
    expect(await outcomeOf(agent.resume(finished.runId))).toBe('run-not-resumable');
    // A forged id of the right shape but someone else's format is just unknown.
    expect(await outcomeOf(agent.resume('../../runs/*'))).toBe('not-found');

    // Another tab (another agent on the database) is streaming a run: it holds the lock.
    const live = agentFor(session, {
      conversationId,
      memory: { database },
      limits: { streamIdleTimeoutMs: 60_000 },
    });
    // Read by hand, not with for-await: leaving that loop would cancel the run.
    const events = live.run('Keep going')[Symbol.asyncIterator]();
    let liveRunId = '';
    for (;;) {
      const next = await events.next();
      if (next.done) throw new Error('the live run ended early');
      if (next.value.type === 'run-start') liveRunId = next.value.runId;
      if (next.value.type === 'text-delta') break;
    }
    expect(await outcomeOf(agent.resume(liveRunId))).toBe('conversation-busy');
    expect((await agent.memory.listRuns({ conversationId }))[0]).toMatchObject({
      id: liveRunId,
      status: 'running',
    });
  }, 60_000);

  it('lets one of two resumes at once go on, and refuses the other', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      { text: 'Half', fault: { kind: 'stall', afterChunks: 2 } },
      { text: 'Resumed once.' },
      { text: 'must not be asked' },
    ]);
    const closing = agentFor(session, {
      conversationId,
      memory: { database },
      limits: { streamIdleTimeoutMs: 60_000 },
    });
    let runId = '';
    for await (const event of closing.run('Go')) {
      if (event.type === 'run-start') runId = event.runId;
      if (event.type === 'text-delta') closing.dispose();
    }
    const reopened = agentFor(session, { conversationId, memory: { database } });
    await reopened.ready;
    const outcomes = await Promise.all([
      outcomeOf(reopened.resume(runId)),
      outcomeOf(reopened.resume(runId)),
    ]);
    expect(outcomes.sort()).toEqual(['conversation-busy', 'resolved']);
    // After it finished, a third resume finds nothing left to do.
    expect(await outcomeOf(reopened.resume(runId))).toBe('run-not-resumable');
    expect(await receivedBodies(session)).toHaveLength(2);
  }, 60_000);

  it('refuses a run whose stored checkpoint was tampered with (run-not-resumable), losing nothing', async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      {
        toolCalls: [
          { name: 'fast', arguments: {} },
          { name: 'slow', arguments: {} },
        ],
      },
      { text: 'never asked' },
    ]);
    const { runs, list, release } = tools();
    const closing = agentFor(session, { conversationId, tools: list, memory: { database } });
    let runId = '';
    for await (const event of closing.run('Do both')) {
      if (event.type === 'run-start') runId = event.runId;
      if (event.type === 'tool-result') {
        await until(() => runs.slow === 1, 'slow to start');
        closing.dispose();
      }
    }
    release();
    // Same-origin code rewrites the step's checkpoint: a settled "result" for a call never made.
    await editRunRow(database, runId, (row) => {
      const pending = row.pendingStep as { settled: unknown[] };
      pending.settled.push({ role: 'tool', tool_call_id: 42, content: { forged: true } });
    });

    const reopened = agentFor(session, { conversationId, tools: list, memory: { database } });
    // Its seal no longer holds: refused before the checkpoint is even parsed.
    expect(await outcomeOf(reopened.resume(runId))).toBe('run-not-resumable');
    expect(runs).toEqual({ fast: 1, slow: 1 });
    expect(await receivedBodies(session)).toHaveLength(1);
    const stored = await reopened.memory.getConversation(conversationId);
    expect(stored?.messages.map((message) => message.message.role)).toEqual(['user']);
    expect((await reopened.memory.listRuns({ conversationId }))[0]?.status).toBe('interrupted');
  }, 60_000);
});

/** Rewrites one run row in place, as other code of the same origin could. */
async function editRunRow(
  database: string,
  runId: string,
  edit: (row: Record<string, unknown>) => void,
): Promise<void> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open(database);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const transaction = db.transaction('runs', 'readwrite');
      const store = transaction.objectStore('runs');
      const read = store.get(runId);
      read.onsuccess = () => {
        const row = read.result as Record<string, unknown>;
        edit(row);
        store.put(row);
      };
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error);
    });
  } finally {
    db.close();
  }
}
