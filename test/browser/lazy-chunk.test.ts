import { type AgentEvent, isAirlockError } from 'airlock-agents';
import { describe, expect, it, onTestFinished } from 'vitest';
import { commands } from 'vitest/browser';
import { agentFor, collect, scriptModel } from './support';

// The fixture agent worker built as an app builds it (one chunk per lazy import()), served
// with chunks missing, as after a deploy that replaced the files under a page still open
// (test/setup/built-agent-worker.mjs).

declare module 'vitest/browser' {
  interface BrowserCommands {
    /** Serves the built agent worker without the chunks named (404, or an HTML page). */
    serveBuiltAgentWorker: (
      without: readonly string[],
      answer?: '404' | 'html',
    ) => Promise<{ entryUrl: string; missing: string[] }>;
    /** Closes that server; the chunk files it refused. */
    closeBuiltAgentWorker: (entryUrl: string) => Promise<string[]>;
  }
}

/** A worker factory for the built agent worker without `chunks`, and what its server refused. */
async function builtWorkerWithout(chunks: readonly string[], answer?: '404' | 'html') {
  const { entryUrl, missing } = await commands.serveBuiltAgentWorker(chunks, answer);
  expect(missing).toEqual(chunks);
  onTestFinished(async () => void (await commands.closeBuiltAgentWorker(entryUrl)));
  // Same-origin module that imports the cross-origin entry: a worker's own script must be
  // same-origin, its imports need only CORS (the iframe tier starts tool workers so too).
  const bootstrap = URL.createObjectURL(
    new Blob([`import ${JSON.stringify(entryUrl)};`], { type: 'text/javascript' }),
  );
  onTestFinished(() => URL.revokeObjectURL(bootstrap));
  return {
    worker: () => new Worker(bootstrap, { type: 'module' }),
    refused: () => commands.closeBuiltAgentWorker(entryUrl),
  };
}

/** What a promise rejected with, as code and details, or `resolved`. */
async function failureOf(promise: Promise<unknown>) {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return isAirlockError(error)
      ? { code: error.code, details: error.details, message: error.message }
      : String(error);
  }
}

type RunError = Extract<AgentEvent, { type: 'run-error' }>;

describe('a lazy chunk of the agent worker that cannot load', () => {
  it('ends the run that needs it with worker-load-failed naming the chunk, and the agent goes on', async () => {
    const session = await scriptModel([{ text: 'Never asked for.' }]);
    const built = await builtWorkerWithout(['memory-tools']);
    const agent = agentFor(session, { worker: built.worker, memory: { tools: true } });
    await agent.ready;

    const events = await collect(agent.run('Remember that I like tea.'));
    const last = events.at(-1) as RunError;
    expect(last.type).toBe('run-error');
    expect(last.error).toMatchObject({
      code: 'worker-load-failed',
      details: { chunk: 'memory-tools' },
      message: expect.stringContaining('`memory-tools`'),
    });
    // The browser's raw wording does not reach the app as the error's code.
    expect(events.filter((event) => event.type === 'run-error')).toHaveLength(1);

    // The rest of the worker is whole: the memory service (another chunk) answers.
    expect(await agent.memory.listMemories()).toEqual([]);
    expect((await built.refused()).map((file) => file.replace(/-[\w-]{8}\.js$/, ''))).toContain(
      'memory-tools',
    );
  });

  it('rejects a memory call whose service chunk is missing with worker-load-failed naming it', async () => {
    const session = await scriptModel([{ text: 'Hello.' }]);
    const built = await builtWorkerWithout(['memory-api']);
    const agent = agentFor(session, { worker: built.worker, memory: { tools: false } });
    await agent.ready;
    expect(await failureOf(agent.memory.listMemories())).toMatchObject({
      code: 'worker-load-failed',
      details: { chunk: 'memory-api' },
    });
    // A run needs no memory service: it still answers, and is stored.
    const run = agent.run('Hi');
    expect((await run.result).text).toBe('Hello.');
  });

  it('types a chunk answered with an HTML page (a single-page app server falling back to index.html) the same way', async () => {
    const session = await scriptModel([{ text: 'Never asked for.' }]);
    const built = await builtWorkerWithout(['memory-tools'], 'html');
    const agent = agentFor(session, { worker: built.worker, memory: { tools: true } });
    await agent.ready;
    expect(await failureOf(agent.run('Hi').result)).toMatchObject({
      code: 'worker-load-failed',
      details: { chunk: 'memory-tools' },
    });
  });
});
