import { type AgentEvent, type ToolsetOptions, tool } from 'airlock-agents';
import type { ScriptedToolCall } from 'airlock-agents/testing/remote';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentFor, collect, scriptModel } from './support';

// Every way a script can run out of stack or memory, in both isolation tiers: each ends in
// the code tool's documented error, the run goes on, and the worker runs the next script.

type ToolResult = Extract<AgentEvent, { type: 'tool-result' }>;

/** A structure 10 000 levels deep, built without recursion. */
const DEEP = 'let deep = {};\nfor (let i = 0; i < 1e4; i++) deep = { a: deep };\n';

/** Scripts that go deeper than any stack: in the engine, in its parser, or in its built-ins. */
const STACK_BLOWERS: Record<string, string> = {
  'plain recursion': 'function f(n) { return f(n + 1) + 1; }\nreturn f(0);',
  'mutual recursion':
    'function a(n) { return b(n) + 1; }\nfunction b(n) { return a(n) + 1; }\nreturn a(0);',
  'JSON.parse of unclosed brackets': "return JSON.parse('['.repeat(1e5));",
  'JSON.parse of closed brackets': "return JSON.parse('['.repeat(1e5) + ']'.repeat(1e5)).length;",
  'eval of nested parentheses': "return eval('('.repeat(1e5) + '1' + ')'.repeat(1e5));",
  'eval of nested array literals': "return eval('['.repeat(1e5) + ']'.repeat(1e5));",
  'eval of nested object literals': "return eval('({a:'.repeat(1e4) + '1' + '})'.repeat(1e4));",
  'eval of nested template strings':
    "return eval(('`$' + '{').repeat(1e4) + '1' + '}`'.repeat(1e4));",
  'eval of nested functions': "return eval('(function(){'.repeat(1e4) + '})()'.repeat(1e4));",
  'eval of nested arrows': "return eval('() => '.repeat(1e5) + '1');",
  'eval of a long unary chain': "return eval('-'.repeat(1e5) + '1');",
  'the Function constructor':
    "return new Function('return ' + '['.repeat(1e5) + ']'.repeat(1e5))();",
  'a nested regular expression':
    "return new RegExp('(?:'.repeat(1e5) + 'a' + ')'.repeat(1e5)).test('a');",
  'JSON.stringify of a deep object': `${DEEP}return JSON.stringify(deep).length;`,
  'String of a deep array':
    'let a = [];\nfor (let i = 0; i < 1e4; i++) a = [a];\nreturn String(a).length;',
  'toString calling itself':
    'const o = { toString() { return String(this); } };\nreturn String(o);',
  'a Proxy trap calling itself':
    'const p = new Proxy({}, { get(t, k, r) { return r[k]; } });\nreturn p.x;',
  'a getter calling itself': 'const o = { get x() { return this.x; } };\nreturn o.x;',
  'a sort comparator recursing': 'function s() { [2, 1].sort(() => s()); }\nreturn s();',
};

const overflow = {
  ok: false,
  error: { code: 'tool-failed', message: expect.stringMatching(/overflowed its stack/) },
};

/**
 * Scripts that hand the host a value too deep to read, each with the outcomes it may have:
 * reading it runs the browser's stack out (Chromium's and Firefox's, as tested), which ends
 * the script as an overflow; or QuickJS's own check stops the reading first (WebKit's
 * deeper stack), and the value reads as QuickJS shows what it cannot write as JSON.
 */
const DEEP_VALUES: Record<string, { script: string; outcomes: unknown[] }> = {
  'returning a deep object': { script: `${DEEP}return deep;`, outcomes: [overflow] },
  'throwing a deep object': {
    script: `${DEEP}throw deep;`,
    outcomes: [
      overflow,
      {
        ok: false,
        error: { code: 'tool-failed', message: 'The script threw a value: "[object Object]"' },
      },
    ],
  },
  'logging a deep object': {
    script: `${DEEP}console.log(deep);\nreturn 1;`,
    outcomes: [overflow, { ok: true, output: { result: 1, logs: ['[object Object]'] } }],
  },
  'calling a tool with deep arguments': {
    script: `${DEEP}return await tools.get_weather(deep);`,
    outcomes: [
      overflow,
      {
        ok: false,
        error: {
          code: 'tool-failed',
          message: expect.stringMatching(/^The script threw ToolError .*do not match the schema/),
        },
      },
    ],
  },
};

/** Scripts that allocate past the 4 MiB the fixture allows, each in its own way. */
const MEMORY_HOGS: Record<string, string> = {
  'a huge repeated string': "return 'x'.repeat(2 ** 28).length;",
  // Each doubling made flat: QuickJS keeps `s + s` as a rope, which only runs into the length limit.
  'a string doubled without end': "let s = 'x';\nfor (;;) s = (s + s).toLowerCase();",
  'a huge filled array': 'return new Array(1e8).fill(0).length;',
  'a huge ArrayBuffer': 'return new ArrayBuffer(2 ** 30).byteLength;',
  'a huge typed array': 'return new Uint8Array(1e9).length;',
  'an array grown without end': 'const a = [];\nfor (let i = 0; ; i++) a.push(i);',
  'a string split into characters': "return 'x'.repeat(3e6).split('').length;",
  'a Map grown without end': 'const m = new Map();\nfor (let i = 0; ; i++) m.set(i, { i });',
};

/** A run of some fifty scripts, a fresh engine after each broken one, on a machine shared with other browsers. */
const SEQUENCE_MS = 150_000;

const CHECK = 'return [1, 2, 3].map((n) => n * 14).reduce((sum, n) => sum + n, 0);';

/** The worker tier from a factory; the iframe tier by URL, marked as a worker entry so the dev server serves it as one. */
const codeLimitsUrl = new URL('./fixtures/code-limits-tools.worker.ts', import.meta.url).href;
const tiers = {
  worker: {
    name: 'code',
    // One worker per conversation, kept past its runs: `killed` counts only workers killed at a deadline.
    reuse: 'conversation',
    poolSize: 1,
    worker: () =>
      new Worker(new URL('./fixtures/code-limits-tools.worker.ts', import.meta.url), {
        type: 'module',
      }),
  },
  iframe: {
    name: 'code',
    // One worker per conversation, kept past its runs: `killed` counts only workers killed at a deadline.
    reuse: 'conversation',
    poolSize: 1,
    isolation: 'iframe',
    workerUrl: `${codeLimitsUrl}?worker_file&type=module`,
  },
} satisfies Record<string, ToolsetOptions>;

const getWeather = tool({
  name: 'get_weather',
  description: 'Weather for a city.',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city }),
});

/**
 * Runs each script as a step of one run, each followed by a check script, then asks the
 * worker what went unhandled in it; a second run (a fresh worker) runs `last` and a check.
 */
async function runEach(toolset: ToolsetOptions, scripts: readonly string[], last: string) {
  const call = (code: string, index: number): ScriptedToolCall => ({
    id: `call_${index}`,
    name: 'run_js',
    arguments: { code },
  });
  const steps = scripts.flatMap((code) => [code, CHECK]);
  const session = await scriptModel([
    ...steps.map((code, index) => ({ toolCalls: [call(code, index)] })),
    { toolCalls: [{ id: 'call_unhandled', name: 'unhandled_errors', arguments: {} }] },
    { text: 'done' },
    { toolCalls: [call(last, 1_000)] },
    { toolCalls: [call(CHECK, 1_001)] },
    { toolCalls: [{ id: 'call_unhandled_2', name: 'unhandled_errors', arguments: {} }] },
    { text: 'done again' },
  ]);
  const agent = agentFor(session, {
    toolsets: [toolset],
    tools: [getWeather],
    limits: { maxSteps: steps.length + 2 },
    // The long first run would have the second one summarise it first, with a turn of the script.
    memory: { summarize: false },
  });
  await agent.ready;
  const first = await collect(agent.run('Compute'));
  // Another conversation: another worker, fresh from the pool.
  const second = await collect(agent.run('Once more', { conversationId: crypto.randomUUID() }));
  const resultsOf = (events: AgentEvent[]) =>
    events.filter((event): event is ToolResult => event.type === 'tool-result');
  return {
    first: resultsOf(first),
    second: resultsOf(second),
    ends: [first.at(-1)?.type, second.at(-1)?.type],
    stats: agent.sandboxStats().code,
  };
}

const outcome = (result: ToolResult | undefined) =>
  result?.ok ? { ok: true, output: result.output } : { ok: false, error: result?.error };

/** Whether `actual` is one of `expected`, each compared as `toEqual` would. */
function isOneOf(actual: unknown, expected: readonly unknown[]): boolean {
  return expected.some((candidate) => {
    try {
      expect(actual).toEqual(candidate);
      return true;
    } catch {
      return false;
    }
  });
}

describe.each(Object.entries(tiers))('the code tool in the %s tier', (_tier, toolset) => {
  it(
    'ends every way of overflowing the stack in tool-failed naming the stack, and the same worker and a fresh one run the next script',
    async () => {
      const names = Object.keys(STACK_BLOWERS);
      const deepNames = Object.keys(DEEP_VALUES);
      const { first, second, ends, stats } = await runEach(
        toolset,
        [...Object.values(STACK_BLOWERS), ...Object.values(DEEP_VALUES).map((deep) => deep.script)],
        STACK_BLOWERS['JSON.parse of unclosed brackets'] as string,
      );

      const checked = { ok: true, output: { result: 84, logs: [] } };
      const scripts = first.filter((result) => result.toolName === 'run_js');
      const ended = (index: number) => outcome(scripts[index * 2]);
      expect(Object.fromEntries(names.map((name, index) => [name, ended(index)]))).toEqual(
        Object.fromEntries(names.map((name) => [name, overflow])),
      );
      const unexpected = deepNames
        .map((name, index) => ({ name, ended: ended(names.length + index) }))
        .filter(({ name, ended }) => !isOneOf(ended, DEEP_VALUES[name]?.outcomes ?? []));
      expect(unexpected).toEqual([]);
      expect(scripts.filter((_, index) => index % 2 === 1).map(outcome)).toEqual(
        [...names, ...deepNames].map(() => checked),
      );
      expect(second.filter((result) => result.toolName === 'run_js').map(outcome)).toEqual([
        overflow,
        checked,
      ]);
      // Nothing went unhandled in either worker, no worker was killed, and both runs finished.
      expect(first.at(-1)).toMatchObject({ toolName: 'unhandled_errors', ok: true, output: [] });
      expect(second.at(-1)).toMatchObject({ toolName: 'unhandled_errors', ok: true, output: [] });
      expect(stats?.killed).toBe(0);
      expect(ends).toEqual(['run-finish', 'run-finish']);
    },
    SEQUENCE_MS,
  );

  it(
    'ends every way of allocating past the memory limit in tool-memory-limit, and the same worker and a fresh one run the next script',
    async () => {
      const names = Object.keys(MEMORY_HOGS);
      const { first, second, ends, stats } = await runEach(
        toolset,
        Object.values(MEMORY_HOGS),
        MEMORY_HOGS['a huge repeated string'] as string,
      );

      const overMemory = {
        ok: false,
        error: { code: 'tool-memory-limit', message: expect.stringMatching(/memory limit/) },
      };
      const checked = { ok: true, output: { result: 84, logs: [] } };
      const scripts = first.filter((result) => result.toolName === 'run_js');
      expect(
        Object.fromEntries(names.map((name, index) => [name, outcome(scripts[index * 2])])),
      ).toEqual(Object.fromEntries(names.map((name) => [name, overMemory])));
      expect(scripts.filter((_, index) => index % 2 === 1).map(outcome)).toEqual(
        names.map(() => checked),
      );
      expect(second.filter((result) => result.toolName === 'run_js').map(outcome)).toEqual([
        overMemory,
        checked,
      ]);
      expect(first.at(-1)).toMatchObject({ toolName: 'unhandled_errors', ok: true, output: [] });
      expect(second.at(-1)).toMatchObject({ toolName: 'unhandled_errors', ok: true, output: [] });
      expect(stats?.killed).toBe(0);
      expect(ends).toEqual(['run-finish', 'run-finish']);
    },
    SEQUENCE_MS,
  );

  it('lets a script catch its own recursion past the default stack, as QuickJS stops it before the browser does', async () => {
    const { first } = await runEach(
      toolset,
      [
        `function f(n) { return f(n + 1) + 1; }
         function g(n) { return [n].map((m) => g(m + 1))[0]; }
         const caught = [];
         for (const deep of [f, g]) {
           try { deep(0); } catch (error) { caught.push(error.name + ': ' + error.message); }
         }
         return caught;`,
      ],
      CHECK,
    );

    expect(outcome(first[0])).toEqual({
      ok: true,
      output: {
        result: ['InternalError: stack overflow', 'InternalError: stack overflow'],
        logs: [],
      },
    });
  });

  it('ends a built-in looping past the deadline, out of the interrupt’s reach, as tool-timeout by the kill, and a fresh worker runs the next script', async () => {
    // Array.prototype.join walks a billion holes in C: QuickJS checks for interrupts only
    // between instructions of the script, so the deadline is kept by killing the worker.
    const { first } = await runEach(toolset, ["return new Array(1e9).join('').length;"], CHECK);

    expect(first.filter((result) => result.toolName === 'run_js').map(outcome)).toEqual([
      {
        ok: false,
        error: { code: 'tool-timeout', message: expect.stringContaining('worker was killed') },
      },
      { ok: true, output: { result: 84, logs: [] } },
    ]);
  });
});
