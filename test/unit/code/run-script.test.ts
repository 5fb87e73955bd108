import { describe, expect, it } from 'vitest';
import { codeTool } from '../../../src/code/code-tool';
import { QuickJsEngine } from '../../../src/code/quickjs-engine';
import { type HostAnswer, runScript } from '../../../src/code/run-script';

// QuickJS as the code tool runs it, in Node's V8: its stack runs out inside the parser
// before QuickJS's own check (as in Chromium's workers), which breaks the module.

const limits = {
  memoryBytes: 4 * 1024 * 1024,
  stackBytes: 128 * 1024,
  timeoutMs: 5_000,
  maxLogChars: 1_000,
};
/** Deep enough for the parser to run Node's stack out before QuickJS's check at 128 KiB. */
const BREAKS_THE_ENGINE = "return eval('('.repeat(1e5) + '1' + ')'.repeat(1e5));";

function host(callTool: (name: string, args: unknown) => Promise<HostAnswer> = never) {
  return { toolNames: ['wait'], callTool, signal: new AbortController().signal };
}
function never(): Promise<HostAnswer> {
  return new Promise(() => {});
}

describe('runScript', () => {
  it('ends a script that runs the browser’s stack out as a stack overflow, and the next script gets a fresh engine', async () => {
    const engine = new QuickJsEngine(limits.memoryBytes);
    const broken = await engine.lease();

    await expect(runScript(broken, BREAKS_THE_ENGINE, limits, host())).rejects.toMatchObject({
      code: 'tool-failed',
      message: expect.stringMatching(
        /^The script overflowed its stack: .*the browser's stack ran out/,
      ),
    });

    expect(broken.retired()).toBe(true);
    const next = await engine.lease();
    expect(next.module).not.toBe(broken.module);
    await expect(runScript(next, 'return 6 * 7;', limits, host())).resolves.toEqual({
      result: 42,
      logs: [],
    });
  });

  it('stops a script that waited for a tool while another one broke their engine', async () => {
    const engine = new QuickJsEngine(limits.memoryBytes);
    let answer: (value: HostAnswer) => void = () => {};
    const waiting = runScript(
      await engine.lease(),
      'const got = await tools.wait({});\nreturn got;',
      limits,
      host(() => new Promise((resolve) => (answer = resolve))),
    );
    const breaking = runScript(await engine.lease(), BREAKS_THE_ENGINE, limits, host());

    await expect(breaking).rejects.toMatchObject({ code: 'tool-failed' });
    answer({ ok: true, output: 'late' });
    await expect(waiting).rejects.toMatchObject({
      code: 'tool-failed',
      message: expect.stringContaining('Another script running in the same engine broke it'),
    });
  });

  it('keeps the engine when QuickJS stops a deep recursion itself', async () => {
    const engine = new QuickJsEngine(limits.memoryBytes);
    const lease = await engine.lease();

    await expect(
      runScript(lease, 'function f(n) { return f(n + 1) + 1; }\nreturn f(0);', limits, host()),
    ).rejects.toMatchObject({
      code: 'tool-failed',
      message: expect.stringMatching(/^The script overflowed its stack of 131072 bytes at line 1/),
    });
    expect(lease.retired()).toBe(false);
    expect((await engine.lease()).module).toBe(lease.module);
  });
});

describe('codeTool', () => {
  it('refuses a stack larger than QuickJS can check before its own stack overflows', () => {
    expect(() =>
      codeTool({
        name: 'run_js',
        description: 'Runs code.',
        limits: { stackBytes: 2 * 1024 * 1024 },
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid-options',
        message: expect.stringContaining('limits.stackBytes'),
      }),
    );
    expect(() =>
      codeTool({ name: 'run_js', description: 'Runs code.', limits: { stackBytes: 1024 * 1024 } }),
    ).not.toThrow();
  });
});
