import { type Agent, isAirlockError } from 'airlock-agents';
import { describe, expect, it } from 'vitest';
import { agentFor, scriptModel, WORKER_START_MS } from './support';

/** What a promise came to within `ms` (generous: a busy machine is slow, a hang is forever). */
async function settledWithin<T>(promise: Promise<T>, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ resolved: value }),
        (error: unknown) => ({ rejected: isAirlockError(error) ? error.code : String(error) }),
      ),
      new Promise<'still pending'>((resolve) => {
        timer = setTimeout(() => resolve('still pending'), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Keeps the agent's store busy: writes and reads in flight, none awaited. */
function keepStoreBusy(agent: Agent, round: number): Promise<unknown>[] {
  return Array.from({ length: 8 }, (_, i) =>
    (i % 2 === 0
      ? agent.memory.saveMemory({ key: `k${round}-${i}`, content: 'x'.repeat(200) })
      : agent.memory.listRuns()
    ).catch(() => undefined),
  );
}

const ROUNDS = 6;

describe('reloading an agent', () => {
  // WebKit (2.50) leaves a database unusable for every later connection when a worker is
  // terminated while one of its transactions commits: the next agent's open succeeds and its
  // first transaction waits forever. Before dispose closed the store first, 3 reloads in 10
  // of this test hung so.
  it(
    'starts a new agent on the database of one disposed while its store was writing, every time',
    async () => {
      const session = await scriptModel([]);
      const reloads: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const database = `test-${crypto.randomUUID()}`;
        const agent = agentFor(session, { memory: { database, tools: false } });
        await agent.ready;
        const busy = keepStoreBusy(agent, round);
        // Disposed at a different point of the burst each round.
        await new Promise((resolve) => setTimeout(resolve, round % 4));
        agent.dispose();
        await Promise.all(busy);

        const next = agentFor(session, { memory: { database, tools: false } });
        // A hang is forever; a busy engine may take most of the start budget to start a worker.
        const ready = await settledWithin(next.ready, WORKER_START_MS);
        const read = await settledWithin(next.memory.listMemories(), WORKER_START_MS);
        reloads.push({ ready, read });
        next.dispose();
      }

      expect(reloads).toEqual(
        Array(ROUNDS).fill({
          ready: { resolved: expect.any(Array) },
          read: { resolved: expect.any(Array) },
        }),
      );
    },
    ROUNDS * 2 * WORKER_START_MS + 60_000,
  );

  // A reload or a closed tab gives dispose no say: the browser ends the worker wherever its
  // store is. Terminated so here, mid-burst, the next agent started in 8 of 8 rounds in
  // WebKitGTK 2.50 too (the e2e tabs test closes a running page and reopens one likewise).
  it(
    'starts a new agent on the database of one whose worker was ended under it while its store was writing',
    async () => {
      const session = await scriptModel([]);
      const reloads: unknown[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const database = `test-${crypto.randomUUID()}`;
        let worker: Worker | undefined;
        const agent = agentFor(session, {
          memory: { database, tools: false },
          worker: () => {
            worker = new Worker(new URL('./fixtures/agent.worker.ts', import.meta.url), {
              type: 'module',
            });
            return worker;
          },
        });
        await agent.ready;
        const busy = keepStoreBusy(agent, round);
        await new Promise((resolve) => setTimeout(resolve, round % 4));
        worker?.terminate();
        // Its calls in flight end (worker-crashed or agent-disposed); none is awaited for more.
        agent.dispose();
        await Promise.all(busy);

        const next = agentFor(session, { memory: { database, tools: false } });
        const ready = await settledWithin(next.ready, WORKER_START_MS);
        const read = await settledWithin(next.memory.listMemories(), WORKER_START_MS);
        reloads.push({ ready, read });
        next.dispose();
      }

      expect(reloads).toEqual(
        Array(ROUNDS).fill({
          ready: { resolved: expect.any(Array) },
          read: { resolved: expect.any(Array) },
        }),
      );
    },
    ROUNDS * 2 * WORKER_START_MS + 60_000,
  );
});
