import { type AgentEvent, tool } from 'airlock-agents';
import { describe, expect, it, onTestFinished } from 'vitest';
import { server } from 'vitest/browser';
import { z } from 'zod';
import { agentFor, collect, receivedBodies, scriptModel } from './support';

type ToolResult = Extract<AgentEvent, { type: 'tool-result' }>;

const codeToolsUrl = new URL('./fixtures/code-tools.worker.ts', import.meta.url).href;
const codeToolset = {
  name: 'code',
  // Kept past the run, so `killed` counts only workers killed at a deadline.
  reuse: 'conversation' as const,
  worker: () =>
    new Worker(new URL('./fixtures/code-tools.worker.ts', import.meta.url), { type: 'module' }),
};

/** Page tools the script may call: one that runs at once, one that waits for approval. */
function pageTools() {
  const deleted: string[] = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'Weather for a city.',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => ({ city, temperatureC: city.length }),
  });
  const deleteNote = tool({
    name: 'delete_note',
    description: 'Deletes a note.',
    parameters: z.object({ id: z.string() }),
    needsApproval: true,
    execute: ({ id }) => {
      deleted.push(id);
      return 'deleted';
    },
  });
  return { deleted, tools: [getWeather, deleteNote] };
}

/** Runs scripts as successive steps of one run, in one code worker; returns each script's result. */
async function runScripts(scripts: readonly string[]) {
  const session = await scriptModel([
    ...scripts.map((code, index) => ({
      toolCalls: [{ id: `call_${index}`, name: 'run_js', arguments: { code } }],
    })),
    { text: 'done' },
  ]);
  const agent = agentFor(session, { toolsets: [codeToolset], tools: pageTools().tools });
  await agent.ready;
  const events = await collect(agent.run('Compute'));
  const results = events.filter((event): event is ToolResult => event.type === 'tool-result');
  return { results, agent, session };
}

describe('code tool', () => {
  it('stops a script that allocates without end at its memory limit, and the next script in the same worker runs', async () => {
    const { results, agent } = await runScripts([
      // Many small strings, then fewer large ones: the limit counts both.
      'const kept = []; for (let i = 0; ; i++) kept.push(("item" + i + " ").repeat(2000).split(" "));',
      'const kept = []; for (let i = 0; ; i++) kept.push("x".repeat(50000) + i);',
      'console.log("still here"); return 6 * 7;',
    ]);

    for (const result of results.slice(0, 2)) {
      expect(result).toMatchObject({
        ok: false,
        error: { code: 'tool-memory-limit', message: expect.stringContaining('memory limit') },
      });
    }
    expect(results[2]).toMatchObject({ ok: true, output: { result: 42, logs: ['still here'] } });
    // The limit stopped the script, not a kill: no worker of the toolset was terminated.
    expect(agent.sandboxStats().code?.killed).toBe(0);
  });

  it('interrupts while(true){} at its deadline as tool-timeout, without killing the worker', async () => {
    const { results, agent } = await runScripts(['while (true) {}', 'return "after";']);

    expect(results[0]).toMatchObject({
      ok: false,
      error: { code: 'tool-timeout', message: expect.stringContaining('interrupted') },
    });
    expect(results[1]).toMatchObject({ ok: true, output: { result: 'after' } });
    expect(agent.sandboxStats().code?.killed).toBe(0);
  });

  it('gives the script no fetch, indexedDB, worker globals, timers or WebAssembly', async () => {
    const { results } = await runScripts([
      `return {
        fetch: typeof fetch, indexedDB: typeof indexedDB, XMLHttpRequest: typeof XMLHttpRequest,
        postMessage: typeof postMessage, self: typeof self, importScripts: typeof importScripts,
        setTimeout: typeof setTimeout, WebAssembly: typeof WebAssembly, location: typeof location,
        globals: Object.getOwnPropertyNames(globalThis).filter((name) => /fetch|indexedDB|postMessage|Worker|navigator/i.test(name)),
      };`,
      'return await import("https://example.com/x.js");',
      'import x from "./y.js";\nreturn x;',
    ]);

    expect(results[0]).toMatchObject({
      ok: true,
      output: {
        result: {
          fetch: 'undefined',
          indexedDB: 'undefined',
          XMLHttpRequest: 'undefined',
          postMessage: 'undefined',
          self: 'undefined',
          importScripts: 'undefined',
          setTimeout: 'undefined',
          WebAssembly: 'undefined',
          location: 'undefined',
          globals: [],
        },
      },
    });
    expect(results[1]).toMatchObject({ ok: false, error: { code: 'tool-failed' } });
    expect(results[2]).toMatchObject({
      ok: false,
      error: {
        code: 'tool-failed',
        message: expect.stringMatching(/SyntaxError at line 1, column \d+/),
      },
    });
  });

  it('reports a syntax error with its line and column, and a thrown error as tool-failed', async () => {
    const { results } = await runScripts([
      'const a = 1;\nconst b = a +;\nreturn b;',
      'const n = 2;\nthrow new RangeError("too big: " + n);',
    ]);

    expect(results[0]).toMatchObject({
      ok: false,
      error: {
        code: 'tool-failed',
        message: expect.stringMatching(/^SyntaxError at line 2, column 14: /),
      },
    });
    expect(results[1]).toMatchObject({
      ok: false,
      error: {
        code: 'tool-failed',
        message: expect.stringMatching(
          /^The script threw RangeError at line 2, column \d+: too big: 2$/,
        ),
      },
    });
  });

  it('runs granted tools from the script through the agent: an approval request reaches the page and a rejection is an exception in the script', async () => {
    const { deleted, tools } = pageTools();
    const script = `
      const weather = await tools.get_weather({ city: 'Paris' });
      let refused;
      try {
        await tools.delete_note({ id: 'n1' });
      } catch (error) {
        refused = error.code + ' | ' + error.message;
      }
      let unknown;
      try { await tools.other({}); } catch (error) { unknown = error.name; }
      return { weather, refused, unknown, granted: Object.keys(tools) };`;
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_js', name: 'run_js', arguments: { code: script } }] },
      { text: 'done' },
    ]);
    const agent = agentFor(session, { toolsets: [codeToolset], tools });
    await agent.ready;
    const run = agent.run('Weather, then delete n1');
    const events: AgentEvent[] = [];
    for await (const event of run) {
      events.push(event);
      if (event.type === 'approval-request') await run.reject(event.approvalId, 'Keep it.');
    }

    expect(deleted).toEqual([]);
    expect(events.find((event) => event.type === 'approval-request')).toMatchObject({
      toolName: 'delete_note',
      arguments: { id: 'n1' },
      callId: 'call_js.2',
    });
    const results = events.filter((event): event is ToolResult => event.type === 'tool-result');
    expect(results.map((result) => [result.callId, result.toolName, result.ok])).toEqual([
      ['call_js.1', 'get_weather', true],
      ['call_js.2', 'delete_note', false],
      ['call_js', 'run_js', true],
    ]);
    expect(results.at(-1)).toMatchObject({
      output: {
        result: {
          weather: { city: 'Paris', temperatureC: 5 },
          refused: expect.stringMatching(/^tool-rejected \| .*Keep it\.$/),
          unknown: 'TypeError',
          granted: ['get_weather', 'delete_note'],
        },
      },
    });
    // The model saw one call and its output; the script's calls are not in the conversation.
    const last = (await receivedBodies(session)).at(-1);
    expect(last?.messages.filter((message) => message.role === 'tool')).toHaveLength(1);
  });

  it('lists the granted functions with their argument types in the tool description', async () => {
    const session = await scriptModel([{ text: 'ok' }]);
    const agent = agentFor(session, { toolsets: [codeToolset], tools: pageTools().tools });
    await agent.ready;
    await collect(agent.run('Hi'));

    const offered = (await receivedBodies(session))[0]?.tools ?? [];
    const runJs = offered.find((entry) => entry.function.name === 'run_js') as
      | { function: { description: string } }
      | undefined;
    expect(runJs?.function.description).toContain('tools.get_weather(args: { city: string })');
    expect(runJs?.function.description).toContain('tools.delete_note(args: { id: string })');
  });

  it('fails ready with toolset-unavailable naming wasm-unsafe-eval when the CSP forbids WebAssembly', async () => {
    const session = await scriptModel([]);
    const { worker, refusesWasm } = await workerUnderCsp(
      // The origin by name: Firefox does not match 'self' from a worker on a blob: URL.
      `script-src ${location.origin} 'unsafe-inline' blob:; worker-src ${location.origin} blob:`,
      codeToolsUrl,
    );
    // WebKit enforces this policy on eval but not on WebAssembly: nothing to refuse there.
    expect(refusesWasm).toBe(server.browser !== 'webkit');
    if (!refusesWasm) return;
    const agent = agentFor(session, { toolsets: [{ name: 'code', worker }] });

    await expect(agent.ready).rejects.toMatchObject({
      code: 'toolset-unavailable',
      message: expect.stringContaining("'wasm-unsafe-eval'"),
    });
  });
});

/**
 * A factory of tool workers that inherit a CSP, as on a host page with that policy: a
 * classic worker from a blob URL made in a same-origin frame with the policy, which imports
 * the tool module and holds the connect message until the module listens for it. Also
 * says whether that frame refuses to compile WebAssembly, as the workers inherit it.
 */
async function workerUnderCsp(
  policy: string,
  moduleUrl: string,
): Promise<{ worker: () => Worker; refusesWasm: boolean }> {
  const frame = document.createElement('iframe');
  frame.srcdoc = `<!doctype html><meta http-equiv="Content-Security-Policy" content="${policy}"><p>csp</p>`;
  const loaded = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
  document.body.append(frame);
  onTestFinished(() => frame.remove());
  await loaded;
  const view = frame.contentWindow as unknown as typeof globalThis;
  const source = `
    const held = [];
    const hold = (event) => held.push(event);
    addEventListener('message', hold);
    import(${JSON.stringify(moduleUrl)}).then(() => {
      removeEventListener('message', hold);
      for (const event of held) dispatchEvent(new MessageEvent('message', { data: event.data }));
    });`;
  const url = view.URL.createObjectURL(new view.Blob([source], { type: 'text/javascript' }));
  let refusesWasm = false;
  try {
    new view.WebAssembly.Module(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
  } catch {
    refusesWasm = true;
  }
  return { worker: () => new view.Worker(url), refusesWasm };
}

describe('code tool isolation', () => {
  const defaultCodeToolsUrl = new URL('./fixtures/default-code-tools.worker.ts', import.meta.url)
    .href;

  it('runs model-written code in the iframe tier by default, its granted tools called through the agent', async () => {
    const session = await scriptModel([
      {
        toolCalls: [
          {
            id: 'call_js',
            name: 'run_js',
            arguments: { code: 'return await tools.get_weather({ city: "Paris" });' },
          },
        ],
      },
      { text: 'done' },
    ]);
    const agent = agentFor(session, {
      toolsets: [{ name: 'code', isolation: 'iframe', workerUrl: defaultCodeToolsUrl }],
      tools: pageTools().tools,
    });
    await agent.ready;
    const events = await collect(agent.run('Compute'));
    const results = events.filter((event): event is ToolResult => event.type === 'tool-result');

    expect(results.map((result) => result.callId)).toEqual(['call_js.1', 'call_js']);
    expect(results.at(-1)).toMatchObject({
      ok: true,
      output: { result: { city: 'Paris', temperatureC: 5 } },
    });
  });

  it("refuses to serve model-written code in a worker of the app's origin unless the code tool accepts the worker tier", async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      toolsets: [
        { name: 'code', worker: () => new Worker(defaultCodeToolsUrl, { type: 'module' }) },
      ],
      tools: pageTools().tools,
    });

    await expect(agent.ready).rejects.toMatchObject({
      code: 'toolset-unavailable',
      message: expect.stringMatching(
        /runs code the model wrote.*isolation: 'iframe'.*isolation: 'worker'/,
      ),
    });
  });
});

describe('tool calls asked for by a tool worker', () => {
  it('refuses them for a tool that declared no callable tools, and a request naming a call the worker is not running is misbehaviour', async () => {
    const { tools } = pageTools();
    const ran: string[] = [];
    const watched = tools.map((entry) =>
      entry.name === 'get_weather'
        ? { ...entry, execute: (args: { city: string }) => ran.push(args.city) }
        : entry,
    );
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_a', name: 'call_ungranted', arguments: {} }] },
      { toolCalls: [{ id: 'call_b', name: 'call_for_another', arguments: {} }] },
      { text: 'done' },
    ]);
    const hostile = new URL('./fixtures/hostile-code-tools.worker.ts', import.meta.url).href;
    const agent = agentFor(session, {
      toolsets: [{ name: 'hostile', worker: () => new Worker(hostile, { type: 'module' }) }],
      tools: watched as typeof tools,
    });
    await agent.ready;
    const events = await collect(agent.run('Try'));
    const results = events.filter((event): event is ToolResult => event.type === 'tool-result');

    expect(ran).toEqual([]);
    expect(results.find((result) => result.callId === 'call_a')).toMatchObject({
      ok: true,
      output: { ok: false, error: { code: 'tool-not-allowed' } },
    });
    expect(results.find((result) => result.callId === 'call_b')).toMatchObject({
      ok: false,
      error: { code: 'tool-misbehaved' },
    });
  });
});
