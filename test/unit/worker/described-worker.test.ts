import { describe, expect, it, onTestFinished } from 'vitest';
import type { ToolsetConfig } from '../../../src/protocol/sandbox-wire';
import { describedTools, loadFailure } from '../../../src/worker/tools/described-worker';
import { SandboxConnection } from '../../../src/worker/tools/sandbox-connection';

const CONFIG: ToolsetConfig = {
  name: 'tools',
  isolation: 'worker',
  reuse: 'run',
  poolSize: 1,
  maxConcurrency: 4,
  timeoutMs: 30_000,
  graceMs: 30,
  startTimeoutMs: 10_000,
};

/** A connection to a fake tool worker that answers `describe` with `answer(id)`. */
function connectionAnswering(answer: (id: number) => unknown) {
  const channel = new MessageChannel();
  const violations: string[] = [];
  const connection = new SandboxConnection(1, channel.port1, (broken) =>
    violations.push(broken.violation ?? ''),
  );
  channel.port2.onmessage = (event: MessageEvent<{ kind: string; id: number }>) => {
    if (event.data.kind === 'describe') channel.port2.postMessage(answer(event.data.id));
  };
  onTestFinished(() => {
    connection.close();
    channel.port2.close();
  });
  return { connection, violations };
}

describe('a new tool worker’s description', () => {
  it('gives the tools of a worker whose lockdown removed everything', async () => {
    const { connection } = connectionAnswering((id) => ({
      kind: 'described',
      id,
      tools: ['spec'],
      exposed: [],
    }));

    expect(describedTools(CONFIG, await connection.describe())).toEqual({ tools: ['spec'] });
  });

  it('refuses a worker that still reaches what its lockdown removes, naming each', async () => {
    const { connection } = connectionAnswering((id) => ({
      kind: 'described',
      id,
      tools: [],
      exposed: ['indexedDB', 'navigator.locks'],
    }));

    const described = describedTools(CONFIG, await connection.describe());

    expect(described).toEqual({
      failure: expect.objectContaining({ code: 'toolset-unavailable' }),
    });
    expect('failure' in described && described.failure.message).toBe(
      'Toolset "tools" cannot start: its worker still reaches indexedDB, navigator.locks after serveTools removed them, so its tools would too.',
    );
  });

  it.each([
    ['no exposed list at all', undefined],
    ['a string instead of a list', 'nothing'],
    ['names that are not strings', [42]],
    ['a name of 10,000 characters', ['x'.repeat(10_000)]],
    ['a list of 1,000 names', Array.from({ length: 1_000 }, (_, index) => `name${index}`)],
  ])(
    'takes a description with %s for a protocol violation, not for tools',
    async (_case, exposed) => {
      const { connection, violations } = connectionAnswering((id) => ({
        kind: 'described',
        id,
        tools: [],
        ...(exposed === undefined ? {} : { exposed }),
      }));

      expect(await connection.describe()).toBeUndefined();
      expect(violations).toEqual(['posted a message that is not an answer']);
    },
  );

  it('tells a worker that did not describe itself in time, or could not serve, from one that did', () => {
    expect(describedTools(CONFIG, undefined)).toEqual({
      failure: expect.objectContaining({
        code: 'toolset-unavailable',
        message: expect.stringContaining('did not describe its tools within 10000 ms'),
      }),
    });
    expect(describedTools(CONFIG, { unavailable: 'No WebAssembly.' })).toEqual({
      failure: expect.objectContaining({
        message: 'Toolset "tools" cannot start: No WebAssembly.',
      }),
    });
  });
});

describe('a tool worker whose script did not load', () => {
  /** The supervisor's end of a status port, and the page's end to post on. */
  function statusPort() {
    const channel = new MessageChannel();
    const loading = loadFailure(channel.port1);
    onTestFinished(() => {
      loading.stop();
      channel.port2.close();
    });
    return { loading, page: channel.port2 };
  }

  it('fails typed with the toolset, the reason and the URL the page heard', async () => {
    const { loading, page } = statusPort();
    page.postMessage({ kind: 'load-failed', reason: 'not found', url: 'https://app.test/t.js' });

    const described = describedTools(CONFIG, await loading.failed);

    expect('failure' in described && described.failure).toMatchObject({
      code: 'toolset-unavailable',
      message: 'Toolset "tools" could not load its worker https://app.test/t.js: not found',
      details: { toolset: 'tools', reason: 'not found', url: 'https://app.test/t.js' },
    });
  });

  it('ignores forged or malformed status messages, and caps a huge reason', async () => {
    const { loading, page } = statusPort();
    for (const forged of [
      null,
      'load-failed',
      { kind: 'described', id: 1, tools: [], exposed: [] },
      { kind: 'load-failed', reason: 42 },
      { kind: 'load-failed', reason: 'x', url: { href: 'y' } },
    ])
      page.postMessage(forged);
    page.postMessage({ kind: 'load-failed', reason: 'y'.repeat(1_000_000) });

    const failed = await loading.failed;

    expect('loadFailed' in failed && failed.loadFailed.length).toBeLessThan(2_100);
    expect('url' in failed).toBe(false);
  });
});
