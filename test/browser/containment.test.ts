import { type AgentEvent, type ToolsetOptions, tool } from 'airlock-agents';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, scriptModel } from './support';

// Issue #46's attacks on the relay of live runs, tried as an attacker would: code that knows
// the database's name, in a tool worker of either tier or a script of the origin, reaching
// for the channels that carry other runs' events and decisions. Only a port to the app's tab
// hub reaches those, and only a document of the origin can make one.

const attackUrl = new URL('./fixtures/relay-attack-tools.worker.ts', import.meta.url).href;
const tiers: Record<'worker' | 'iframe', ToolsetOptions> = {
  worker: { name: 'attack', worker: () => new Worker(attackUrl, { type: 'module' }) },
  iframe: { name: 'attack', isolation: 'iframe', workerUrl: attackUrl },
};

/** What the attacking tool reports it reached. */
interface Reached {
  readonly locks: string[];
  readonly heard: string[];
  readonly approved: string[];
  readonly unavailable: string[];
}

/** A page tool that must never run without the page's approval, and how often it ran. */
function deleteAllTool() {
  const counter = { runs: 0 };
  const deleteAll = tool({
    name: 'delete_all',
    description: 'Deletes every note.',
    parameters: z.object({}),
    needsApproval: true,
    execute: () => {
      counter.runs++;
      return { deleted: 'everything' };
    },
  });
  return { counter, deleteAll };
}

/** The events of `run` up to its first `approval-request`, and that request. */
async function untilApprovalRequest(run: AsyncIterator<AgentEvent>) {
  for (;;) {
    const next = await run.next();
    if (next.done) throw new Error('The run ended without asking for approval.');
    if (next.value.type === 'approval-request') return next.value;
  }
}

/** A same-origin script's `BroadcastChannel` on `name`, closed when the test ends. */
function broadcastChannel(name: string): BroadcastChannel {
  const channel = new BroadcastChannel(name);
  onTestFinished(() => channel.close());
  return channel;
}

describe("a worker-tier tool answered another tool's approval (#46, attack 1)", () => {
  for (const tier of ['worker', 'iframe'] as const) {
    it(`in the ${tier} tier, a tool that lists the locks and poses as a watching tab never hears, approves or stops another run`, async () => {
      const database = `test-${crypto.randomUUID()}`;
      const victim = `victim-${crypto.randomUUID()}`;
      const { counter, deleteAll } = deleteAllTool();
      const session = await scriptModel([
        // The victim's run asks to delete everything, and waits for the page.
        { toolCalls: [{ name: 'delete_all', arguments: {} }] },
        // Meanwhile a run of another conversation calls the attacking tool.
        {
          toolCalls: [
            {
              name: 'eavesdrop',
              arguments: { database, conversationId: victim, listenMs: 2_000 },
            },
          ],
        },
        { text: 'Listened.' },
        { text: 'Nothing was deleted.' },
      ]);
      const agent = agentFor(session, {
        memory: { database },
        tools: [deleteAll],
        toolsets: [tiers[tier]],
      });
      // Another tab watches the victim's conversation, so its run is relayed to the hub.
      const watching = agentFor(session, { memory: { database } });
      const watch = watching.watch(victim);
      await watch.listening;
      const watched: AgentEvent[] = [];
      const watching$ = (async () => {
        for await (const event of watch) {
          watched.push(event);
          if (event.type === 'run-finish' || event.type === 'run-error') return;
        }
      })();

      const run = agent.run('Delete everything', { conversationId: victim });
      const victimEvents = run[Symbol.asyncIterator]();
      const request = await untilApprovalRequest(victimEvents);
      const attack = await collect(agent.run('Listen around', { conversationId: 'attacker' }));
      const result = attack.find((event) => event.type === 'tool-result');
      expect(result).toMatchObject({ type: 'tool-result', toolName: 'eavesdrop', ok: true });
      const reached = (result?.type === 'tool-result' && result.ok ? result.output : {}) as Reached;

      // Nothing of the victim's run reached the tool, and its approval still waits for the page.
      expect(reached.heard).toEqual([]);
      expect(reached.approved).toEqual([]);
      expect(counter.runs).toBe(0);
      expect(watched.map((event) => event.type)).toContain('approval-request');
      await run.reject(request.approvalId, 'No.');
      while (!(await victimEvents.next()).done) {}
      expect((await run.result).text).toBe('Nothing was deleted.');
      expect(counter.runs).toBe(0);
      await watching$;
      expect(watched.at(-1)).toMatchObject({ type: 'run-finish', runId: run.runId });
    });
  }
});

describe('forged runs on a watch (#46, attack 2)', () => {
  it("shows a watch nothing a same-origin script posts on the relay's old BroadcastChannel, and gives that script nothing to hear or stop", async () => {
    const database = `test-${crypto.randomUUID()}`;
    const conversationId = crypto.randomUUID();
    const session = await scriptModel([
      { text: 'one two three four five six seven eight', chunkDelayMs: 20 },
    ]);
    const running = agentFor(session, { memory: { database } });
    const watching = agentFor(session, { memory: { database } });
    await running.ready;

    // The forger knows the database and the conversation, and speaks the relay's wire.
    const overheard: unknown[] = [];
    const watches = broadcastChannel(`airlock:${database}:watches`);
    watches.onmessage = ({ data }) => overheard.push(data);
    watches.postMessage({ kind: 'watching', requestId: 'forged-watch', conversationId });
    const relay = broadcastChannel(`airlock:${database}:conversation:${conversationId}:relay`);
    relay.onmessage = ({ data }) => overheard.push(data);
    const forgedStart: AgentEvent = {
      type: 'run-start',
      runId: 'run_forged',
      model: 'airlock-test-model',
    };
    const forgedApproval = {
      type: 'approval-request',
      runId: 'run_forged',
      approvalId: 'approval_forged',
      callId: 'call_forged',
      toolName: 'delete_all',
      arguments: {},
    };
    const forge = () => {
      relay.postMessage({
        kind: 'events',
        source: 'relay_forged',
        runId: 'run_forged',
        seq: 0,
        events: [forgedStart, forgedApproval],
      });
      relay.postMessage({
        kind: 'joined',
        source: 'relay_forged',
        runId: 'run_forged',
        next: 2,
        events: [forgedStart, forgedApproval],
      });
    };

    const watch = watching.watch(conversationId);
    await watch.listening;
    forge();
    const run = running.run('Talk', { conversationId });
    const watched: AgentEvent[] = [];
    for await (const event of watch) {
      watched.push(event);
      if (event.type === 'text-delta') {
        forge();
        relay.postMessage({ kind: 'sync' });
        relay.postMessage({
          kind: 'control',
          requestId: 'forged-stop',
          runId: run.runId,
          action: 'stop',
        });
      }
      if (event.type === 'run-finish' || event.type === 'run-error') break;
    }

    // The watch followed the real run alone, from its start to its end, unstopped.
    expect(watched[0]).toMatchObject({ type: 'run-start', runId: run.runId });
    expect(JSON.stringify(watched)).not.toContain('forged');
    expect(watched.filter((event) => event.type === 'warning')).toEqual([]);
    expect(watched.at(-1)).toMatchObject({ type: 'run-finish', reason: 'stop' });
    expect((await run.result).reason).toBe('stop');
    // The user's click on the forged request reaches no one.
    await expect(watch.approve('approval_forged')).rejects.toMatchObject({
      code: 'approval-unknown',
    });
    // And the forger heard nothing: no answer to its announcement, no event, no join.
    expect(overheard).toEqual([]);
  });
});
