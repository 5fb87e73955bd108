import { type AgentEvent, createAgent, type FlowPolicy, tool } from 'airlock-agents';
import type { RemoteModelSession, ScriptedTurn } from 'airlock-agents/testing/remote';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { collect, scriptModel, WORKER_START_MS } from './support';

// Issue #50 with #51's router: a route that accepts public data only (`accepts.confidentiality:
// []`) is never sent a request whose context holds private data; the run goes to the local
// route, or fails `no-model-route` when there is none, rather than falling back to the cloud.

const PIN = '4321';
const POLICY: FlowPolicy = { untrustedToSink: 'approve' };

/** A tool that reads the user's notes: its output is private (and written by the app: trusted). */
const readNotes = tool({
  name: 'read_notes',
  description: "Reads the user's notes.",
  parameters: z.object({}),
  outputLabel: { confidentiality: 'private', integrity: 'trusted' },
  execute: () => `The door code is ${PIN}.`,
});

function routedAgent(cloud: RemoteModelSession, local: RemoteModelSession | undefined) {
  const agent = createAgent({
    worker: () =>
      new Worker(new URL('./fixtures/private-route.worker.ts', import.meta.url), {
        type: 'module',
      }),
    model: {
      model: 'airlock-test-model',
      baseURL: cloud.baseURL,
      // No local endpoint: the local route points at a closed port and must never be asked.
      headers: { 'x-test-local': local?.baseURL ?? 'http://127.0.0.1:9/v1' },
      maxRetries: 0,
    },
    tools: [readNotes],
    flow: POLICY,
    memory: { database: `private-route-${crypto.randomUUID()}`, tools: false },
    startTimeoutMs: WORKER_START_MS,
  });
  onTestFinished(() => agent.dispose());
  return agent;
}

const routesOf = (events: readonly AgentEvent[]) =>
  events.flatMap((event) => (event.type === 'model-route' ? [event] : []));

const readTurn: ScriptedTurn = {
  toolCalls: [{ id: 'call_notes', name: 'read_notes', arguments: {} }],
};

describe('a private context never reaches the cloud model', () => {
  it('sends every step of a run with private input to the local route, the cloud receiving nothing', async () => {
    const cloud = await scriptModel([{ text: 'Cloud should not answer.' }]);
    const local = await scriptModel([readTurn, { text: 'Answered on the device.' }]);
    const agent = routedAgent(cloud, local);

    const run = agent.run(`My PIN is ${PIN}. What do my notes say?`, {
      labels: { confidentiality: 'private' },
    });
    const events = await collect(run);
    expect(await run.result).toMatchObject({ reason: 'stop', text: 'Answered on the device.' });

    const routes = routesOf(events);
    expect(routes.map((event) => event.route)).toEqual(['local', 'local']);
    for (const event of routes)
      expect(event.passedOver).toEqual([
        { route: 'cloud', reason: 'confidentiality', levels: ['private'] },
      ]);
    expect(await cloud.requests()).toEqual([]);
    expect(await local.requests()).toHaveLength(2);
  });

  it('moves to the local route once a private tool result is in the context, the cloud never seeing it', async () => {
    // Public input: the cloud takes the first step and asks for the notes.
    const cloud = await scriptModel([readTurn, { text: 'Cloud should not answer this one.' }]);
    const local = await scriptModel([{ text: 'Your notes hold a door code.' }]);
    const agent = routedAgent(cloud, local);

    const run = agent.run('What do my notes say?');
    const events = await collect(run);
    expect(await run.result).toMatchObject({
      reason: 'stop',
      text: 'Your notes hold a door code.',
    });

    expect(routesOf(events).map((event) => [event.route, event.passedOver])).toEqual([
      ['cloud', []],
      ['local', [{ route: 'cloud', reason: 'confidentiality', levels: ['private'] }]],
    ]);
    const toCloud = await cloud.requests();
    expect(toCloud).toHaveLength(1);
    expect(JSON.stringify(toCloud)).not.toContain(PIN);
    // The local model got the notes.
    expect(JSON.stringify(await local.requests())).toContain(PIN);
  });

  it('fails no-model-route when no eligible route is left, rather than falling back to the cloud', async () => {
    const cloud = await scriptModel([{ text: 'Cloud should not answer.' }]);
    const agent = createAgent({
      worker: () =>
        new Worker(new URL('./fixtures/cloud-only-route.worker.ts', import.meta.url), {
          type: 'module',
        }),
      model: { model: 'airlock-test-model', baseURL: cloud.baseURL, maxRetries: 0 },
      memory: { database: `private-route-${crypto.randomUUID()}`, tools: false },
      startTimeoutMs: WORKER_START_MS,
    });
    onTestFinished(() => agent.dispose());

    const run = agent.run(`My PIN is ${PIN}.`, { labels: { confidentiality: 'private' } });
    const events = await collect(run);
    await expect(run.result).rejects.toMatchObject({
      code: 'no-model-route',
      details: { routes: [{ route: 'cloud', reason: 'confidentiality', levels: ['private'] }] },
    });
    expect(events.at(-1)).toMatchObject({ type: 'run-error', error: { code: 'no-model-route' } });
    expect(await cloud.requests()).toEqual([]);
  });
});
