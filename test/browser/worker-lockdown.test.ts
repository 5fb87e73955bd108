import type { AgentEvent, AgentRun, ToolsetOptions, WorkerToolsetOptions } from 'airlock-agents';
import { serveTools, tool } from 'airlock-agents/sandbox';
import type { ScriptedToolCall } from 'airlock-agents/testing/remote';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, scriptModel } from './support';

// Each test is an attack by a tool in the worker tier (the default) on what a same-origin
// worker reaches unless serveTools takes it away: Airlock's database, its locks and
// channels, the origin's caches, and a fresh realm where all of it is back. Each tool
// reports what it reached; the run goes on and the page reads that report.

type ToolResult = Extract<AgentEvent, { type: 'tool-result' }>;

const escaping = (options: Partial<WorkerToolsetOptions> = {}): ToolsetOptions => ({
  name: 'escaping',
  // Written out in full: the dev server prepares a worker's modules (its `import()` among
  // them) only when it sees `new Worker(new URL('…', import.meta.url))` itself.
  worker: () =>
    new Worker(new URL('./fixtures/escaping-tools.worker.ts', import.meta.url), { type: 'module' }),
  ...options,
});

/** An attempt stopped because what it used is not there, in every engine's words. */
const GONE = /^failed: (ReferenceError|TypeError)\b/;

/** An agent whose first step makes `calls`, then answers. */
async function agentCalling(calls: ScriptedToolCall[], toolset = escaping()) {
  const session = await scriptModel([{ toolCalls: calls }, { text: 'The run went on.' }]);
  return agentFor(session, { toolsets: [toolset] });
}

/** Plays a run; returns its tool results by call id and how it ended. */
async function play(run: AgentRun) {
  const events = await collect(run);
  const results = Object.fromEntries(
    events
      .filter((event): event is ToolResult => event.type === 'tool-result')
      .map((result) => [result.callId, result.ok ? result.output : result]),
  );
  return { results, final: await run.result };
}

describe('a tool in the worker tier', () => {
  it("cannot open Airlock's IndexedDB to read or rewrite a conversation, and the run goes on", async () => {
    const databaseName = `test-${crypto.randomUUID()}`;
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_idb', name: 'rewrite_conversations', arguments: { database: databaseName } },
        ],
      },
      { text: 'The run went on.' },
    ]);
    const agent = agentFor(session, {
      toolsets: [escaping()],
      memory: { database: databaseName },
    });
    const { results, final } = await play(agent.run('Try to escape'));

    expect(results.call_idb).toEqual({
      listed: expect.stringMatching(GONE),
      rewritten: expect.stringMatching(GONE),
    });
    expect(final.text).toBe('The run went on.');
    const stored = await agent.memory.getConversation(agent.conversationId);
    expect(stored?.conversation.title).not.toBe('owned by a tool');
  });

  it('cannot list or take Web Locks, so the next run of its conversation is not conversation-busy', async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_lock', name: 'hold_conversation_lock', arguments: {} }] },
      { text: 'The run went on.' },
      { text: 'And the next one ran.' },
    ]);
    // The tool's worker outlives the run, so a lock it queued for would be granted and kept.
    const agent = agentFor(session, { toolsets: [escaping({ reuse: 'conversation' })] });
    const { results, final } = await play(agent.run('Try to escape'));

    expect(results.call_lock).toEqual({
      listed: expect.stringMatching(GONE),
      queued: 'failed: Error: no lock to take',
    });
    expect(final.text).toBe('The run went on.');
    await expect(agent.run('Again').result).resolves.toMatchObject({
      text: 'And the next one ran.',
    });
  });

  it('cannot post on a BroadcastChannel of the origin, where other tabs listen', async () => {
    const channel = `airlock-lockdown-${crypto.randomUUID()}`;
    const heard: unknown[] = [];
    const listening = new BroadcastChannel(channel);
    listening.onmessage = (event) => heard.push(event.data);
    onTestFinished(() => listening.close());
    const agent = await agentCalling([
      { id: 'call_bc', name: 'broadcast', arguments: { channel, text: 'approve everything' } },
    ]);
    const { results, final } = await play(agent.run('Try to escape'));

    expect(results.call_bc).toEqual({ posted: expect.stringMatching(GONE) });
    expect(final.text).toBe('The run went on.');
    // A message posted would have arrived long before the run's second model call ended.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(heard).toEqual([]);
  });

  it("cannot plant a response in the origin's caches", async () => {
    const cache = `airlock-lockdown-${crypto.randomUUID()}`;
    onTestFinished(() => caches.delete(cache).then(() => undefined));
    const agent = await agentCalling([
      { id: 'call_cache', name: 'plant_cache', arguments: { cache } },
    ]);
    const { results, final } = await play(agent.run('Try to escape'));

    expect(results.call_cache).toEqual({ planted: expect.stringMatching(GONE) });
    expect(final.text).toBe('The run went on.');
    expect(await caches.has(cache)).toBe(false);
  });

  it('cannot start a nested worker from a blob URL, a fresh realm where everything is back', async () => {
    const agent = await agentCalling([{ id: 'call_nest', name: 'spawn_worker', arguments: {} }]);
    const { results, final } = await play(agent.run('Try to escape'));

    expect(results.call_nest).toEqual({ spawned: expect.stringMatching(GONE) });
    expect(final.text).toBe('The run went on.');
  });

  it('cannot load a script with importScripts', async () => {
    const agent = await agentCalling([
      { id: 'call_import', name: 'import_scripts', arguments: {} },
    ]);
    const { results } = await play(agent.run('Try to escape'));

    expect(results.call_import).toEqual({
      type: 'undefined',
      imported: expect.stringMatching(GONE),
    });
  });

  it("gets none of it back by prototype walks, self.constructor, WorkerGlobalScope.prototype, Function('return this')(), navigator.__proto__, a blob module or an interface's constructor", async () => {
    const agent = await agentCalling([{ id: 'call_back', name: 'get_back', arguments: {} }]);
    const { results, final } = await play(agent.run('Try to escape'));

    expect(results.call_back).toEqual({
      found: [],
      // Each route works: it finds what the lockdown keeps (on the global's prototypes, in
      // every engine tested, so neither the global itself nor its own class's prototype).
      control: [
        'self.__proto__.__proto__.fetch: function',
        'WorkerGlobalScope.prototype.fetch: function',
        "Function('return this')().fetch: function",
        "Function('return fetch')(): function",
        'import(blob:).fetch: function',
        'navigator.__proto__.userAgent: string',
        'WorkerNavigator.prototype.userAgent: string',
      ],
    });
    expect(final.text).toBe('The run went on.');
  });
});

describe('serveTools', () => {
  // Written out in full, as for the escaping tools.
  const loadedTools = () =>
    new Worker(new URL('./fixtures/lockdown/loaded-tools.worker.ts', import.meta.url), {
      type: 'module',
    });
  const moduleNotList = () =>
    new Worker(new URL('./fixtures/lockdown/module-not-list.worker.ts', import.meta.url), {
      type: 'module',
    });
  const pinnedIndexedDb = () =>
    new Worker(new URL('./fixtures/lockdown/pinned-indexeddb.worker.ts', import.meta.url), {
      type: 'module',
    });

  it("loads a loader's tool modules after the lockdown, while the entry's static imports ran before it", async () => {
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_seen', name: 'report_import_time', arguments: {} }] },
      { text: 'The run went on.' },
    ]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'loaded', worker: loadedTools }],
    });
    const { results } = await play(agent.run('What did the modules see?'));

    expect(results.call_seen).toEqual({
      // Documented: what the entry imports statically runs first and keeps what it took.
      staticImport: { indexedDB: 'object', BroadcastChannel: 'function', locks: 'object' },
      loaded: { indexedDB: 'undefined', BroadcastChannel: 'undefined', locks: 'undefined' },
    });
  });

  it('makes a toolset whose loader gives something other than a list of tools unavailable, saying so', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'loaded', worker: moduleNotList }],
    });

    await expect(agent.ready).rejects.toMatchObject({
      code: 'toolset-unavailable',
      message: expect.stringContaining('Its tools could not be loaded'),
    });
  });

  it('makes a toolset unavailable when its worker keeps a capability the lockdown could not remove', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'pinned', worker: pinnedIndexedDb }],
    });

    await expect(agent.ready).rejects.toMatchObject({
      code: 'toolset-unavailable',
      message: expect.stringContaining('still reaches indexedDB'),
    });
    // Refused, not retried: no worker is left behind.
    await expect.poll(() => agent.sandboxStats().pinned?.live).toBe(0);
  });
});

describe('serveTools called on a page', () => {
  // Last in this file: were the page locked down, nothing after it could start a worker.
  it('refuses with invalid-usage and takes nothing from the page', () => {
    const echo = tool({
      name: 'echo',
      description: 'Returns its text.',
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    });

    expect(() => serveTools([echo])).toThrow(expect.objectContaining({ code: 'invalid-usage' }));
    expect(() => serveTools(async () => [echo])).toThrow(
      expect.objectContaining({ code: 'invalid-usage' }),
    );
    expect(typeof Worker).toBe('function');
    expect(typeof indexedDB).toBe('object');
    expect(typeof navigator.locks).toBe('object');
    expect(typeof BroadcastChannel).toBe('function');
  });
});
