import { type AirlockError, isAirlockError, type ToolsetOptions } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { agentFor, collect, scriptModel, testToolsWorker } from './support';

// Each toolset waits up to ten minutes for its worker; each test gets one. A start that
// failed only at its deadline would time the test out: the assertions are on the typed
// error, never on how long it took.
const TEN_MINUTES = 600_000;
const TEST_TIMEOUT_MS = 60_000;

const missingUrl = () =>
  new URL(`/missing-${crypto.randomUUID()}/tools.worker.js`, location.href).href;

/** What `ready` rejected with (it must reject). */
async function startFailure(toolset: ToolsetOptions): Promise<AirlockError> {
  const session = await scriptModel([{ text: 'never asked' }]);
  const agent = agentFor(session, { toolsets: [toolset] });
  try {
    const error = await agent.ready.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    if (!isAirlockError(error)) throw new Error(`ready did not reject typed: ${String(error)}`);
    // The run fails as its toolset's start did, and no worker is left running.
    await expect(agent.run('Hello').result).rejects.toMatchObject({ code: 'toolset-unavailable' });
    expect(agent.sandboxStats()[toolset.name]?.live).toBe(0);
    expect(await session.requests()).toHaveLength(0);
    return error;
  } finally {
    agent.dispose();
  }
}

describe('a tool worker whose script cannot load', () => {
  it(
    'fails the toolset at once when its worker script is not found (worker tier), long before startTimeoutMs',
    async () => {
      const url = missingUrl();
      const error = await startFailure({
        name: 'missing',
        worker: () => new Worker(url, { type: 'module' }),
        startTimeoutMs: TEN_MINUTES,
      });

      expect(error.code).toBe('toolset-unavailable');
      expect(error.message).toContain('Toolset "missing" could not load its worker');
      expect(error.details).toMatchObject({ toolset: 'missing', reason: expect.any(String) });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'fails the toolset at once when its worker script has a syntax error, with the engine’s message',
    async () => {
      const source = URL.createObjectURL(
        new Blob(['export const = "not a program";'], { type: 'text/javascript' }),
      );
      try {
        const error = await startFailure({
          name: 'broken',
          worker: () => new Worker(source, { type: 'module' }),
          startTimeoutMs: TEN_MINUTES,
        });

        expect(error.code).toBe('toolset-unavailable');
        expect(error.message).toContain('Toolset "broken" could not load its worker');
        expect(error.details).toMatchObject({ toolset: 'broken' });
      } finally {
        URL.revokeObjectURL(source);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'fails an iframe toolset at once when its module is not found, naming the URL',
    async () => {
      const url = missingUrl();
      const error = await startFailure({
        name: 'missing-iframe',
        isolation: 'iframe',
        workerUrl: url,
        startTimeoutMs: TEN_MINUTES,
      });

      expect(error.code).toBe('toolset-unavailable');
      expect(error.message).toContain(`Toolset "missing-iframe" could not load its worker ${url}`);
      expect(error.details).toMatchObject({ toolset: 'missing-iframe', url });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'fails a call at once when a worker started after the toolset was ready is not found (the files were replaced)',
    async () => {
      const url = missingUrl();
      let started = 0;
      // The policy worker and the first call's worker load; from then on the script is gone.
      const worker = () => {
        started++;
        return started <= 2 ? testToolsWorker() : new Worker(url, { type: 'module' });
      };
      const session = await scriptModel([
        { toolCalls: [{ name: 'echo', arguments: { text: 'one' } }] },
        { toolCalls: [{ name: 'echo', arguments: { text: 'two' } }] },
        { text: 'Done.' },
      ]);
      const agent = agentFor(session, {
        toolsets: [
          { name: 'replaced', worker, reuse: 'call', poolSize: 0, startTimeoutMs: TEN_MINUTES },
        ],
      });
      await agent.ready;

      const run = agent.run('Echo twice');
      const events = await collect(run);

      expect((await run.result).text).toBe('Done.');
      const results = events.filter((event) => event.type === 'tool-result');
      expect(results.map((event) => event.ok)).toEqual([true, false]);
      const failed = results[1];
      expect(failed?.ok === false ? failed.error : undefined).toMatchObject({
        code: 'tool-crashed',
        message: expect.stringContaining('Toolset "replaced" could not start a worker'),
      });
      expect(started).toBe(3);
      expect(agent.sandboxStats().replaced?.live).toBeLessThanOrEqual(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'caps a huge error message from a module that throws as it loads, and still fails typed',
    async () => {
      const huge = 'x'.repeat(100_000);
      const source = URL.createObjectURL(
        new Blob([`throw new Error(${JSON.stringify(huge)});`], { type: 'text/javascript' }),
      );
      try {
        const error = await startFailure({
          name: 'thrower',
          worker: () => new Worker(source, { type: 'module' }),
          startTimeoutMs: TEN_MINUTES,
        });

        expect(error.code).toBe('toolset-unavailable');
        expect(error.message.length).toBeLessThan(5_000);
      } finally {
        URL.revokeObjectURL(source);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
