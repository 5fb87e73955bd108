import {
  type AgentEvent,
  type AgentOptions,
  type AgentWatch,
  createAgent,
  isAirlockError,
  tool,
} from 'airlock-agents';
import type { ScriptedTurn } from 'airlock-agents/testing/remote';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { type TabChannel, tabChannelsOver } from '../../src/tabs/tab-channels';
import { TabHub } from '../../src/tabs/tab-hub';
import {
  agentFor,
  collect,
  deleteNoteTool,
  scriptModel,
  startTabHub,
  WORKER_START_MS,
} from './support';

// Two agents on one database are two agent workers sharing IndexedDB, Web Locks and the
// app's tab hub, exactly as two tabs of one origin do: one runs, the other watches.

/** The events of a watch up to the end of the first run it sees (its `run-finish` or `run-error`). */
async function watchOneRun(
  watch: AgentWatch,
  onEvent: (event: AgentEvent) => void | Promise<void> = () => {},
): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of watch) {
    events.push(event);
    await onEvent(event);
    if (event.type === 'run-finish' || event.type === 'run-error') break;
  }
  return events;
}

/** Two tabs of one origin: the same database and conversation. */
function sharedPlace() {
  return { database: `test-${crypto.randomUUID()}`, conversationId: crypto.randomUUID() };
}

/**
 * A channel of the app's tab hub, as a document of the origin can open it (it can start the
 * app's SharedWorker): resolves once the hub has it open, so nothing posted after is missed.
 */
async function hubChannel(name: string): Promise<TabChannel> {
  const channels = tabChannelsOver(startTabHub().port);
  onTestFinished(() => channels.close());
  // The hub handles a client's messages in order: once a post on a second channel of a name
  // of its own has come back, the first channel is open too.
  const channel = channels.open(name);
  const probeName = `probe-${crypto.randomUUID()}`;
  const listening = channels.open(probeName);
  const heard = new Promise<void>((resolve) => {
    listening.onmessage = () => resolve();
  });
  channels.open(probeName).postMessage('open?');
  await heard;
  return channel;
}

/** The relay channel of a conversation, as a document of the origin can open it on the hub. */
function relayChannel(database: string, conversationId: string): Promise<TabChannel> {
  return hubChannel(`airlock:${database}:conversation:${conversationId}:relay`);
}

/** What a relay channel's reader overhears: the messages it was sent, any shape. */
type Overheard = {
  kind?: unknown;
  requestId?: unknown;
  listener?: unknown;
  runId?: unknown;
  seq?: unknown;
  next?: unknown;
  events?: unknown[];
};

/**
 * Announces a watch of `conversationId` on the database's watches channel, as any same-origin
 * script can, and resolves once `listeners` agent workers have answered that they heard it.
 */
async function announceWatch(database: string, conversationId: string, listeners = 1) {
  const channel = await hubChannel(`airlock:${database}:watches`);
  const requestId = `announced-${crypto.randomUUID()}`;
  const heard = new Set<unknown>();
  await new Promise<void>((resolve) => {
    channel.onmessage = (message) => {
      const data = message.data as Overheard | null;
      if (data?.kind !== 'heard' || data.requestId !== requestId) return;
      heard.add(data.listener);
      if (heard.size >= listeners) resolve();
    };
    channel.postMessage({ kind: 'watching', requestId, conversationId });
  });
}

/**
 * Two tabs on one conversation, the model playing `turns`: one to run (with `tools`), one
 * watching, its watch listening.
 */
async function runningAndWatching(turns: ScriptedTurn[], tools: AgentOptions['tools'] = []) {
  const { database, conversationId } = sharedPlace();
  const session = await scriptModel(turns);
  const running = agentFor(session, { memory: { database }, tools });
  const watching = agentFor(session, { memory: { database } });
  const watch = watching.watch(conversationId);
  await watch.listening;
  return { database, conversationId, running, watching, watch };
}

const STREAMED = 'one two three four five six seven eight nine ten';

describe('live runs in every tab', () => {
  it('shows the other tab every event of a run, in order, each once', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const lookup = tool({
      name: 'lookup',
      description: 'Looks up.',
      parameters: z.object({ q: z.string() }),
      execute: ({ q }) => ({ found: q }),
    });
    const { conversationId, running, watch } = await runningAndWatching(
      [
        { text: 'Looking. ', toolCalls: [{ name: 'lookup', arguments: { q: 'x' } }] },
        { text: STREAMED, chunkDelayMs: 5 },
      ],
      [lookup, deleteNote],
    );

    const [ran, watched] = await Promise.all([
      collect(running.run('Find x', { conversationId })),
      watchOneRun(watch),
    ]);

    expect(ran.map((event) => event.type)).toContain('tool-result');
    expect(watched).toEqual(ran);
    expect(counter.runs).toBe(0);
  });

  it('goes on from run to run, and a watch that joins mid-run gets run-start and the waiting approval, then the rest', async () => {
    const { database, conversationId } = sharedPlace();
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { text: 'First answer.' },
      {
        text: 'Checking. ',
        toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }],
      },
      { text: STREAMED, chunkDelayMs: 5 },
    ]);
    const running = agentFor(session, { memory: { database }, tools: [deleteNote] });
    const watching = agentFor(session, { memory: { database } });
    const early = watching.watch(conversationId);
    await early.listening;
    const earlySeen: AgentEvent[] = [];
    const following = (async () => {
      let finished = 0;
      for await (const event of early) {
        earlySeen.push(event);
        if (event.type === 'run-finish' && ++finished === 2) break;
      }
    })();

    await collect(running.run('First', { conversationId }));
    const second = running.run('Second', { conversationId });
    const ran: AgentEvent[] = [];
    let late: Promise<AgentEvent[]> | undefined;
    for await (const event of second) {
      ran.push(event);
      if (event.type !== 'approval-request') continue;
      // Joins while the run waits for the user: what it streamed so far is not replayed.
      let sawRequest: () => void = () => {};
      const requestSeen = new Promise<void>((resolve) => {
        sawRequest = resolve;
      });
      late = watchOneRun(watching.watch(conversationId), (seen) => {
        if (seen.type === 'approval-request') sawRequest();
      });
      await requestSeen;
      await second.approve(event.approvalId);
    }
    const lateSeen = (await late) ?? [];
    await following;

    const request = ran.find((event) => event.type === 'approval-request') as AgentEvent;
    expect(lateSeen[0]).toEqual(ran[0]);
    expect(lateSeen[0]?.type).toBe('run-start');
    expect(lateSeen[1]).toEqual(request);
    // Then every event after the request, in order, each once.
    expect(lateSeen.slice(2)).toEqual(ran.slice(ran.indexOf(request) + 1));
    expect(counter.runs).toBe(1);
    // The early watch saw both runs, whole.
    const starts = earlySeen.filter((event) => event.type === 'run-start');
    expect(starts).toHaveLength(2);
    expect(earlySeen.slice(earlySeen.indexOf(starts[1] as AgentEvent))).toEqual(ran);
  });

  it('never holds up the next run: back-to-back runs in the running tab all start, and the watch sees each', async () => {
    const RUNS = 6;
    const { conversationId, running, watch } = await runningAndWatching(
      Array.from({ length: RUNS }, (_, i) => ({ text: `Answer ${i}.` })),
    );
    const finishedTexts: string[] = [];
    const following = (async () => {
      for await (const event of watch) {
        if (event.type === 'run-finish') finishedTexts.push(event.text);
        if (event.type === 'run-error') finishedTexts.push(`error ${event.error.code}`);
        if (finishedTexts.length === RUNS) break;
      }
    })();

    const results: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const outcome = await running.run(`Question ${i}`, { conversationId }).result.then(
        (result) => result.text,
        (error: { code: string }) => `error ${error.code}`,
      );
      results.push(outcome);
    }
    await following;

    const expected = Array.from({ length: RUNS }, (_, i) => `Answer ${i}.`);
    expect(results).toEqual(expected);
    expect(finishedTexts).toEqual(expected);
  });

  it('posts none of the events of a run no tab watches (nor takes its presence lock), and all of them when a watch is there', async () => {
    const { database, conversationId } = sharedPlace();
    const session = await scriptModel([
      { text: STREAMED, chunkDelayMs: 5 },
      { text: STREAMED, chunkDelayMs: 5 },
    ]);
    const running = agentFor(session, { memory: { database } });
    // Any same-origin script may read the channel; this one never asks for anything.
    const overheard: Array<{ kind?: unknown; runId?: unknown; seq?: unknown; events?: unknown[] }> =
      [];
    (await relayChannel(database, conversationId)).onmessage = ({ data }) =>
      overheard.push(data as Overheard);

    // The run's presence lock (which tells watchers it is over), seen at each of its deltas.
    const presenceLocks = async () =>
      ((await navigator.locks.query()).held ?? []).flatMap((lock) =>
        lock.name?.startsWith(`airlock:${database}:conversation:${conversationId}:relay:run:`)
          ? [lock.name]
          : [],
      );
    const runSeeingLocks = async (input: string) => {
      const events: AgentEvent[] = [];
      const locksSeen: string[][] = [];
      for await (const event of running.run(input, { conversationId })) {
        events.push(event);
        if (event.type === 'text-delta') locksSeen.push(await presenceLocks());
      }
      return { events, locksSeen };
    };

    const { events: unwatched, locksSeen: unwatchedLocks } = await runSeeingLocks('Nobody watches');
    const watching = agentFor(session, { memory: { database } });
    const watch = watching.watch(conversationId);
    await watch.listening;
    const [{ events: ran, locksSeen: watchedLocks }, watched] = await Promise.all([
      runSeeingLocks('Now a tab watches'),
      watchOneRun(watch),
    ]);
    // Nobody could follow the first run: it never took the lock.
    expect(unwatchedLocks.length).toBeGreaterThan(0);
    expect(unwatchedLocks.flat()).toEqual([]);
    const runId = ran[0]?.type === 'run-start' ? ran[0].runId : undefined;
    expect(watchedLocks.flat()).toContain(
      `airlock:${database}:conversation:${conversationId}:relay:run:${runId}`,
    );

    expect(unwatched.at(-1)?.type).toBe('run-finish');
    expect(watched).toEqual(ran);
    const relayed = () => overheard.filter((message) => message.kind === 'events');
    // This page's copy of the last post may come after the watch's.
    await expect
      .poll(() => relayed().flatMap((message) => message.events), { timeout: 10_000 })
      .toEqual(ran);
    expect(relayed()[0]?.seq).toBe(0);
    // One worker posted both runs' messages, in order: the first run's would have come first.
    const firstRunId = unwatched[0]?.type === 'run-start' ? unwatched[0].runId : undefined;
    expect(firstRunId).toBeDefined();
    expect(overheard.filter((message) => message.runId === firstRunId)).toEqual([]);

    // A closed watch lets go of its lock, so the next run is not relayed for nobody.
    watch.close();
    const watchLocks = async () =>
      ((await navigator.locks.query()).held ?? []).filter(
        (lock) => lock.name === `airlock:${database}:conversation:${conversationId}:relay:watch`,
      ).length;
    await expect.poll(watchLocks, { timeout: 10_000 }).toBe(0);
  });

  it('stops a run from the other tab: it ends aborted in both', async () => {
    const { conversationId, running, watching, watch } = await runningAndWatching([
      { text: STREAMED.repeat(20), chunkDelayMs: 50 },
    ]);

    const run = running.run('Talk', { conversationId });
    const watched = await watchOneRun(watch, async (event) => {
      if (event.type === 'text-delta' && event.delta.startsWith('one')) {
        const runId = watch.liveRunId;
        expect(runId).toBe(run.runId);
        await watch.stop(run.runId);
      }
    });

    expect((await run.result).reason).toBe('aborted');
    expect(watched.at(-1)).toMatchObject({ type: 'run-finish', reason: 'aborted' });
    const [record] = await watching.memory.listRuns({ conversationId });
    expect(record?.status).not.toBe('running');
  });

  it('lets the other tab hear, and stop, a run whose model has not begun to answer', async () => {
    // Headers, then nothing: the answer never begins.
    const { conversationId, running, watch } = await runningAndWatching([
      { fault: { kind: 'stall', afterChunks: 0 } },
    ]);

    const run = running.run('Talk', { conversationId });
    const watched = await watchOneRun(watch, async (event) => {
      if (event.type === 'run-start') await watch.stop(event.runId);
    });

    expect(watched[0]).toMatchObject({ type: 'run-start', runId: run.runId });
    expect(watched.some((event) => event.type === 'text-delta')).toBe(false);
    expect(watched.at(-1)).toMatchObject({ type: 'run-finish', reason: 'aborted' });
    expect((await run.result).reason).toBe('aborted');
  });

  it('answers an approval from the other tab: the tool runs once, and the id is used once', async () => {
    const { counter, deleteNote } = deleteNoteTool();
    const { conversationId, running, watching, watch } = await runningAndWatching(
      [
        { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
        { text: 'Deleted.' },
      ],
      [deleteNote],
    );

    const run = running.run('Delete note n1', { conversationId });
    const ranEvents = collect(run);
    let approvalId = '';
    const watched = await watchOneRun(watch, async (event) => {
      if (event.type !== 'approval-request') return;
      approvalId = event.approvalId;
      expect(counter.runs).toBe(0);
      await watch.approve(approvalId);
      // A second answer, from either tab, is refused with the existing typed errors.
      await expect(watch.approve(approvalId)).rejects.toMatchObject({
        code: 'approval-already-decided',
      });
      await expect(run.approve(approvalId)).rejects.toMatchObject({
        code: 'approval-already-decided',
      });
    });

    expect((await run.result).text).toBe('Deleted.');
    expect(counter.runs).toBe(1);
    expect(watched).toEqual(await ranEvents);
    const audit = await watching.memory.toolCalls({ conversationId });
    expect(audit.filter((row) => row.toolName === 'delete_note')).toHaveLength(1);
    // An id no watched run asked for is refused before anything is relayed.
    await expect(watch.approve('approval_never_issued')).rejects.toMatchObject({
      code: 'approval-unknown',
    });
  });

  it('tells the watching tab, and leaves the run interrupted and resumable, when the running tab goes away', async () => {
    const { database, conversationId } = sharedPlace();
    // The answer streams, then the server goes silent: the run is mid-step when its tab goes.
    const session = await scriptModel([
      { text: STREAMED, chunkDelayMs: 10, fault: { kind: 'stall', afterChunks: 6 } },
      { text: 'Picked up again.' },
    ]);
    let runningWorker: Worker | undefined;
    const running = createAgent({
      worker: () => {
        runningWorker = new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), {
          type: 'module',
        });
        return runningWorker;
      },
      tabs: startTabHub,
      model: { baseURL: session.baseURL, model: 'airlock-test-model' },
      memory: { database },
      startTimeoutMs: WORKER_START_MS,
    });
    onTestFinished(() => running.dispose());
    const watching = agentFor(session, { memory: { database } });
    const watch = watching.watch(conversationId);
    await watch.listening;

    const run = running.run('Talk', { conversationId });
    run.result.catch(() => {});
    const watched = await watchOneRun(watch, (event) => {
      // The tab closes: its worker ends at once, as it does when a tab is closed.
      if (event.type === 'text-delta') runningWorker?.terminate();
    });

    const last = watched.at(-1);
    expect(last).toMatchObject({
      type: 'run-error',
      runId: run.runId,
      error: { code: 'run-interrupted', details: { runId: run.runId, status: 'interrupted' } },
    });
    const runs = await watching.memory.listRuns({ conversationId });
    expect(runs.map((record) => [record.id, record.status])).toEqual([[run.runId, 'interrupted']]);

    // Resumable from the tab that is left: the step is asked for again, and the run finishes.
    const resumed = await watching.resume(run.runId).result;
    expect(resumed).toMatchObject({ reason: 'stop', text: 'Picked up again.' });
    const after = await watching.memory.listRuns({ conversationId });
    expect(after.map((record) => [record.id, record.status])).toEqual([[run.runId, 'finished']]);
  });
});

describe('runs no watch can hear', () => {
  /** A run of `input` that calls `onDelta` at each of its text deltas, and its events. */
  async function runWith(
    agent: ReturnType<typeof agentFor>,
    input: string,
    conversationId: string,
    onDelta: (index: number) => void | Promise<void>,
  ) {
    const events: AgentEvent[] = [];
    let deltas = 0;
    for await (const event of agent.run(input, { conversationId })) {
      events.push(event);
      if (event.type === 'text-delta') await onDelta(deltas++);
    }
    return events;
  }

  it('opens no channel in a conversation no watch was noted for, until a watch announces itself: then it joins it mid-run', async () => {
    const { database, conversationId } = sharedPlace();
    const session = await scriptModel([{ text: STREAMED.repeat(4), chunkDelayMs: 40 }]);
    const running = agentFor(session, { memory: { database } });
    const overheard: Overheard[] = [];
    const channel = await relayChannel(database, conversationId);
    channel.onmessage = ({ data }) => overheard.push(data as Overheard);

    const ran = await runWith(running, 'Talk', conversationId, async (index) => {
      // Asked where the run is: nobody is listening on the run's channel to answer.
      if (index === 0) channel.postMessage({ kind: 'sync' });
      // Several chunks later (40 ms apart), a watch announces itself, and asks again.
      if (index === 8) {
        expect(overheard).toEqual([]);
        await announceWatch(database, conversationId);
        channel.postMessage({ kind: 'sync' });
      }
    });

    const runId = ran[0]?.type === 'run-start' ? ran[0].runId : undefined;
    const joined = overheard.filter((message) => message.kind === 'joined');
    expect(joined).toHaveLength(1);
    expect(joined[0]).toMatchObject({ runId, events: [ran[0]] });
    // From the answer on, every event, numbered as the run emitted them (events the relay
    // posted between the announcement and the answer carry lower numbers).
    const next = joined[0]?.next as number;
    const numbered = () =>
      overheard
        .filter((message) => message.kind === 'events')
        .flatMap((message) =>
          (message.events ?? []).map((event, index) => ({
            seq: (message.seq as number) + index,
            event,
          })),
        );
    await expect
      .poll(() => numbered().flatMap(({ seq, event }) => (seq >= next ? [event] : [])))
      .toEqual(ran.slice(next));
    expect(next).toBeGreaterThan(8);
  });

  it('is joined by a watch that opens mid-run, and the next run of the conversation is relayed from its start', async () => {
    const { database, conversationId } = sharedPlace();
    const session = await scriptModel([
      { text: STREAMED.repeat(4), chunkDelayMs: 40 },
      { text: STREAMED, chunkDelayMs: 5 },
    ]);
    const running = agentFor(session, { memory: { database } });
    const watching = agentFor(session, { memory: { database } });
    await watching.ready;
    const seen: AgentEvent[] = [];
    let following: Promise<void> = Promise.resolve();

    const first = await runWith(running, 'First', conversationId, async (index) => {
      // Nine deltas in (40 ms apart), long after the run took its conversation for unwatched.
      if (index !== 8) return;
      const watch = watching.watch(conversationId);
      following = (async () => {
        let finished = 0;
        for await (const event of watch) {
          seen.push(event);
          if (event.type === 'run-finish' && ++finished === 2) break;
        }
      })();
      await watch.listening;
    });
    const second = await collect(running.run('Second', { conversationId }));
    await following;

    expect(seen[0]).toEqual(first[0]);
    const secondStart = seen.findIndex((event, index) => index > 0 && event.type === 'run-start');
    // The first run: its start, then every event from where the watch joined, in order, once:
    // the events after run-start, step-start and the nine deltas the page had seen.
    const joinedAt = first.length - (secondStart - 1);
    expect(joinedAt).toBeGreaterThan(10);
    expect(seen.slice(1, secondStart)).toEqual(first.slice(joinedAt));
    // The second run, whole.
    expect(seen.slice(secondStart)).toEqual(second);
  });

  it('relays every event to a watch that listened before the running worker started', async () => {
    const { database, conversationId } = sharedPlace();
    const session = await scriptModel([{ text: STREAMED, chunkDelayMs: 5 }]);
    const watching = agentFor(session, { memory: { database } });
    const watch = watching.watch(conversationId);
    await watch.listening;
    const running = agentFor(session, { memory: { database } });
    await running.ready;

    const [ran, watched] = await Promise.all([
      collect(running.run('Talk', { conversationId })),
      watchOneRun(watch),
    ]);
    expect(watched).toEqual(ran);
  });

  it('answers no malformed announcement, and a flood of announced conversations makes every run listen', async () => {
    const { database, conversationId } = sharedPlace();
    const session = await scriptModel([{ text: STREAMED.repeat(4), chunkDelayMs: 40 }]);
    const running = agentFor(session, { memory: { database } });
    await running.ready;
    const watches = await hubChannel(`airlock:${database}:watches`);
    const answered: unknown[] = [];
    watches.onmessage = (message) => {
      const data = message.data as Overheard | null;
      if (data?.kind === 'heard') answered.push(data.requestId);
    };
    for (const junk of [
      null,
      'watching',
      { kind: 'watching' },
      { kind: 'watching', requestId: 'bad-1', conversationId: 42 },
      { kind: 'watching', requestId: 'bad-2', conversationId: '' },
      { kind: 'watching', requestId: 'bad-3', conversationId: 'x'.repeat(300) },
      { kind: 'watching', requestId: 7, conversationId },
      { kind: 'heard', requestId: 'bad-4', listener: 'listener_forged' },
    ])
      watches.postMessage(junk);
    // A well-formed one after them is answered, and it alone (the worker answers in order).
    await announceWatch(database, 'another-conversation');
    await expect.poll(() => answered).toEqual([expect.stringMatching(/^announced-/)]);

    // More conversations than a worker notes: it stops noting, and every run listens again.
    for (let i = 0; i <= 10_000; i++)
      watches.postMessage({ kind: 'watching', requestId: `flood-${i}`, conversationId: `c-${i}` });
    await expect.poll(() => answered.length, { timeout: 30_000 }).toBe(1 + 10_001);
    const overheard: Overheard[] = [];
    const channel = await relayChannel(database, conversationId);
    channel.onmessage = ({ data }) => overheard.push(data as Overheard);
    const joined = () => overheard.find((message) => message.kind === 'joined');
    // Asked at every delta until answered: the channel opens as the answer begins.
    const ran = await runWith(running, 'Talk', conversationId, () => {
      if (!joined()) channel.postMessage({ kind: 'sync' });
    });
    expect(joined()).toMatchObject({ events: [ran[0]] });
  });

  it('lets a watch listen when a lock posing as an agent worker never answers its announcement', async () => {
    const { database, conversationId } = sharedPlace();
    const session = await scriptModel([{ text: 'Answer.' }]);
    let release: () => void = () => {};
    const posing = new Promise<void>((resolve) => {
      void navigator.locks.request(`airlock:${database}:relay-listener:forged`, () => {
        resolve();
        return new Promise<void>((done) => {
          release = done;
        });
      });
    });
    onTestFinished(() => release());
    await posing;

    const running = agentFor(session, { memory: { database } });
    await running.ready;
    const watch = running.watch(conversationId);
    await watch.listening;
    const [ran, watched] = await Promise.all([
      collect(running.run('Talk', { conversationId })),
      watchOneRun(watch),
    ]);
    expect(watched).toEqual(ran);
  });
});

describe('what other tabs post on the relay channel', () => {
  it('drops malformed messages and forged events with a warning, and still follows the real run exactly', async () => {
    const { database, conversationId, running, watch } = await runningAndWatching([
      { text: STREAMED, chunkDelayMs: 20 },
    ]);
    const forger = await relayChannel(database, conversationId);

    for (const junk of [
      42,
      'events',
      null,
      { kind: 'events' },
      { kind: 'events', source: 's', runId: 'r', seq: -1, events: [{ type: 'run-start' }] },
      { kind: 'events', source: 's', runId: 'r', seq: 0, events: [{ type: 'no-such-event' }] },
      { kind: 'joined', source: 's', runId: 'r', next: 0, events: [] },
      { kind: 'control-answer', requestId: 7 },
    ])
      forger.postMessage(junk);

    const run = running.run('Talk', { conversationId });
    const ranEvents = collect(run);
    const seen: AgentEvent[] = [];
    for await (const event of watch) {
      seen.push(event);
      if (event.type === 'run-start') {
        // Same run id, another sender: text that the running tab never streamed.
        forger.postMessage({
          kind: 'events',
          source: 'relay_forged',
          runId: run.runId,
          seq: 1,
          events: [{ type: 'text-delta', step: 1, delta: 'FORGED' }],
        });
        // A run-finish for another run while this one is live.
        forger.postMessage({
          kind: 'events',
          source: 'relay_forged',
          runId: 'run_other',
          seq: 5,
          events: [{ type: 'run-error', runId: 'run_other', error: { code: 'x', message: 'x' } }],
        });
      }
      if (event.type === 'run-finish' || event.type === 'run-error') break;
    }
    const ran = await ranEvents;

    const warnings = seen.filter((event) => event.type === 'warning');
    const runEvents = seen.filter((event) => event.type !== 'warning');
    expect(runEvents).toEqual(ran);
    expect(warnings.length).toBeGreaterThanOrEqual(9);
    expect(
      warnings.map((warning) => (warning.type === 'warning' ? warning.message : '')),
    ).toContain(`Events for run ${run.runId} from another sender than its relay were dropped.`);
    for (const warning of warnings)
      expect(warning).toMatchObject({ type: 'warning', code: 'relay-message-dropped' });
    expect(JSON.stringify(runEvents)).not.toContain('FORGED');
  });

  it('ends a forged run no tab holds, and follows the next real run', async () => {
    const { database, conversationId, running, watch } = await runningAndWatching([
      { text: 'Real answer.' },
    ]);
    const forger = await relayChannel(database, conversationId);

    forger.postMessage({
      kind: 'events',
      source: 'relay_forged',
      runId: 'run_forged',
      seq: 0,
      events: [{ type: 'run-start', runId: 'run_forged', model: 'm' }],
    });
    const events = watch[Symbol.asyncIterator]();
    const seen: AgentEvent[] = [];
    // The forged run is dropped once the watch finds its lock free and no record of it.
    for (let i = 0; i < 2; i++) seen.push((await events.next()).value as AgentEvent);
    const ran = await collect(running.run('Real', { conversationId }));
    for (;;) {
      const event = (await events.next()).value as AgentEvent;
      seen.push(event);
      if (event.type === 'run-finish') break;
    }

    expect(seen[0]).toEqual({ type: 'run-start', runId: 'run_forged', model: 'm' });
    expect(seen[1]).toMatchObject({ type: 'warning', code: 'relay-message-dropped' });
    expect(seen.slice(2)).toEqual(ran);
    expect(seen.at(-1)).toMatchObject({ type: 'run-finish', text: 'Real answer.' });
  });

  it('refuses a decision or a stop forged by an unrelated sender unless the run issued that approval', async () => {
    const { database, conversationId } = sharedPlace();
    const { counter, deleteNote } = deleteNoteTool();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: 'Kept.' },
    ]);
    const running = agentFor(session, { memory: { database }, tools: [deleteNote] });
    const run = running.run('Delete note n1', { conversationId });
    const forger = await relayChannel(database, conversationId);
    const answers: unknown[] = [];
    forger.onmessage = (message) => {
      if ((message.data as Overheard | null)?.kind === 'control-answer') answers.push(message.data);
    };

    for await (const event of run) {
      if (event.type !== 'approval-request') continue;
      // No watch was there: the run listens on its channel once a watch announces itself.
      await announceWatch(database, conversationId);
      // An approval id the model chose (its call id), and one made up: neither is Airlock's.
      for (const approvalId of ['call_del', 'approval_forged'])
        forger.postMessage({
          kind: 'control',
          requestId: `forged-${approvalId}`,
          runId: run.runId,
          action: 'approval',
          approvalId,
          approved: true,
        });
      // Malformed controls, and a stop for a run that is not this one, are ignored.
      forger.postMessage({ kind: 'control', requestId: 'x', runId: run.runId, action: 'explode' });
      forger.postMessage({ kind: 'control', requestId: 'y', runId: 'run_other', action: 'stop' });
      await expect.poll(() => answers.length).toBe(2);
      expect(counter.runs).toBe(0);
      await run.reject(event.approvalId, 'No.');
    }

    expect(answers).toEqual([
      expect.objectContaining({
        requestId: 'forged-call_del',
        error: expect.objectContaining({ code: 'approval-unknown' }),
      }),
      expect.objectContaining({
        requestId: 'forged-approval_forged',
        error: expect.objectContaining({ code: 'approval-unknown' }),
      }),
    ]);
    expect(counter.runs).toBe(0);
    expect((await run.result).text).toBe('Kept.');
  });

  it('refuses watch arguments that are not a conversation id, and a stop for no live run', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session);
    for (const bad of ['', 42, 'x'.repeat(300)])
      expect(() => agent.watch(bad as string)).toThrow(
        expect.objectContaining({ code: 'invalid-input' }),
      );
    const watch = agent.watch();
    await watch.listening;
    const stopped = await watch.stop('run_nobody_runs').catch((error: unknown) => error);
    expect(isAirlockError(stopped) && stopped.code).toBe('not-found');
    watch.close();
    expect(await watch[Symbol.asyncIterator]().next()).toEqual({ done: true, value: undefined });
  });

  it('takes calls made at once, before anything was heard: a bad stop rejects, close ends the reading, a second reader is refused', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session);
    const watch = agent.watch();
    // Called in the same task as `watch()`: nothing of the watch may be lost or left unhandled.
    const badStop = watch.stop('');
    const unknownApproval = watch.approve('approval_never_asked');
    watch.reject('approval_never_asked'); // not awaited: must not surface as an unhandled rejection
    const events = watch[Symbol.asyncIterator]();
    expect(() => watch[Symbol.asyncIterator]()).toThrow(
      expect.objectContaining({ code: 'invalid-usage' }),
    );
    watch.close();

    expect(await badStop.catch((error: unknown) => error)).toMatchObject({ code: 'invalid-input' });
    expect(await unknownApproval.catch((error: unknown) => error)).toMatchObject({
      code: 'approval-unknown',
    });
    expect(await events.next()).toEqual({ done: true, value: undefined });
    await watch.listening;
    expect(watch.liveRunId).toBeUndefined();
  });

  it('ends a watch whose agent is disposed in the same task, and its listening resolves', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session);
    const watch = agent.watch();
    agent.dispose();

    await watch.listening;
    expect(await watch[Symbol.asyncIterator]().next()).toEqual({ done: true, value: undefined });
  });
});

describe('the tab hub', () => {
  it('forgets the channels of a client whose worker is gone, once its lock comes free', async () => {
    const hub = new TabHub(navigator.locks);
    const { port1, port2 } = new MessageChannel();
    hub.connect(port1);
    const client = new Worker(new URL('./fixtures/tab-client.worker.ts', import.meta.url), {
      type: 'module',
    });
    onTestFinished(() => client.terminate());
    const name = `relay-${crypto.randomUUID()}`;
    const opened = new Promise((resolve) => {
      client.onmessage = resolve;
    });
    client.postMessage({ port: port2, name }, [port2]);
    await opened;
    await expect.poll(() => hub.openCount(name), { timeout: 10_000 }).toBe(1);

    // The client told the hub its lock once it held it, and the hub waits for it.
    const hubWaits = async () =>
      ((await navigator.locks.query()).pending ?? []).some(({ name = '' }) =>
        name.startsWith('airlock:tab-hub-client:'),
      );
    await expect.poll(hubWaits, { timeout: 10_000 }).toBe(true);

    // As a tab closes: its worker ends at once, closing nothing.
    client.terminate();
    await expect.poll(() => hub.openCount(name), { timeout: 10_000 }).toBe(0);
  });
});
