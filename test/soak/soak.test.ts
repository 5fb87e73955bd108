import {
  type Agent,
  type AgentEvent,
  type AgentRun,
  createAgent,
  isAirlockError,
  tool,
} from 'airlock-agents';
import { createRemoteSession } from 'airlock-agents/testing/remote';
import { expect, inject, it } from 'vitest';
import { commands } from 'vitest/browser';
import { z } from 'zod';
import { drawPlan, expectedErrors, type SoakPlan, scriptFor } from './soak-plan';

declare module 'vitest/browser' {
  interface BrowserCommands {
    /** Dedicated worker targets the browser reports (CDP); null without CDP. */
    workerTargets: () => Promise<number | null>;
    /** Writes the soak's figures where `npm run soak` asked for them (a no-op otherwise). */
    writeSoakReport: (report: string) => Promise<void>;
  }
}

// Many runs, each with faults drawn from a seed, checking after every run what must hold
// whatever went wrong. A violation prints the run's seed: replay it alone with
// `AIRLOCK_SOAK_SEED=<seed> AIRLOCK_SOAK_RUNS=1 npm run soak`.

const POOL_SIZE = 1;
const toolsWorkerUrl = new URL('../browser/fixtures/tools.worker.ts', import.meta.url);

interface Figures {
  runs: number;
  finished: number;
  failed: number;
  aborted: number;
  faults: Record<string, number>;
  violations: { seed: number; what: string }[];
  heapBytes: number[];
  workerTargetsMax: number;
}

const confirmMe = tool({
  name: 'confirm_me',
  description: 'A page tool that always asks first.',
  parameters: z.object({}),
  needsApproval: true,
  execute: () => 'confirmed',
});

function startAgent(
  baseURL: string,
  database: string,
  onWorkerError: (message: string) => void,
): Agent {
  return createAgent({
    worker: () => {
      // Written out where it is used: Vite bundles a worker only in this form (in tests,
      // vitest then also gives the worker what its dynamic imports need).
      const worker = new Worker(new URL('../browser/fixtures/agent.worker.ts', import.meta.url), {
        type: 'module',
      });
      worker.addEventListener('error', (event) => onWorkerError(event.message));
      return worker;
    },
    model: { baseURL, model: 'airlock-test-model', maxRetries: 2 },
    tools: [confirmMe],
    toolsets: [
      {
        name: 'test',
        worker: () => new Worker(toolsWorkerUrl, { type: 'module' }),
        poolSize: POOL_SIZE,
        graceMs: 30,
      },
    ],
    limits: { streamIdleTimeoutMs: 400, maxSteps: 4 },
    // No summaries: a summary call would take the turn scripted for the run (summaries
    // have their own fault tests, a failed one only warns).
    memory: { database, tools: false, summarize: false },
  });
}

/** Plays one run as the plan says; returns its events. */
async function play(run: AgentRun, plan: SoakPlan, onReload: () => void, violations: string[]) {
  const events: AgentEvent[] = [];
  for await (const event of run) {
    events.push(event);
    if (events.length === plan.abortAtEvent) run.abort();
    if (events.length === plan.reloadAtEvent) onReload();
    if (event.type !== 'approval-request') continue;
    const decide = () =>
      plan.approval === 'reject' ? run.reject(event.approvalId) : run.approve(event.approvalId);
    if (plan.approval === 'late') {
      setTimeout(() => void decide(), 40);
      continue;
    }
    // Refused only when the run already ended (an abort, a reload).
    await decide().catch((error: unknown) => {
      if (!isAirlockError(error, 'approval-already-decided'))
        violations.push(`decision refused: ${error}`);
    });
    if (plan.approval === 'twice') {
      const second = await run.approve(event.approvalId).then(
        () => 'taken',
        (error: unknown) =>
          isAirlockError(error, 'approval-already-decided') ? 'refused' : String(error),
      );
      if (second !== 'refused') violations.push(`a second decision was ${second}`);
    }
  }
  return events;
}

/** Every stored tool call has its result and every result its call. */
function unpairedToolMessages(messages: readonly { message: { role: string } }[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  for (const { message } of messages) {
    const m = message as {
      role: string;
      tool_calls?: { id: string }[];
      tool_call_id?: string;
    };
    if (m.role === 'assistant') {
      if (open.size > 0) problems.push(`calls ${[...open].join(', ')} have no result`);
      open.clear();
      for (const call of m.tool_calls ?? []) open.add(call.id);
    } else if (m.role === 'tool') {
      if (!m.tool_call_id || !open.delete(m.tool_call_id))
        problems.push(`result ${m.tool_call_id} answers no open call`);
    } else if (open.size > 0) {
      problems.push(`calls ${[...open].join(', ')} have no result`);
      open.clear();
    }
  }
  return problems;
}

it('keeps every invariant through runs of seeded faults', async () => {
  const runs = inject('soakRuns');
  const baseSeed = inject('soakSeed');
  const serverUrl = inject('modelServerUrl');
  const database = `soak-${baseSeed}-${crypto.randomUUID()}`;
  const figures: Figures = {
    runs: 0,
    finished: 0,
    failed: 0,
    aborted: 0,
    faults: {},
    violations: [],
    heapBytes: [],
    workerTargetsMax: 0,
  };
  const workerErrors: string[] = [];
  const session = await createRemoteSession(serverUrl, []);
  const newAgent = () =>
    startAgent(session.baseURL, database, (message) => workerErrors.push(message));
  let agent = newAgent();
  const count = (kind: string) => {
    figures.faults[kind] = (figures.faults[kind] ?? 0) + 1;
  };
  const started = performance.now();
  try {
    for (let index = 0; index < runs; index++) {
      const plan = drawPlan(baseSeed + index);
      const violations: string[] = [];
      await session.replaceTurns(scriptFor(plan));
      if (plan.model !== 'none') count(`model:${plan.model}`);
      for (const fault of plan.tools) count(`tool:${fault}`);
      if (plan.tools.some((fault) => fault.startsWith('approval')))
        count(`approval:${plan.approval}`);
      if (plan.abortAtEvent !== null) count('abort');
      if (plan.reloadAtEvent !== null) count('reload');

      const current = agent;
      const conversationId = `soak-${index % 7}`;
      const run = current.run(`Soak run ${plan.seed}`, { conversationId });
      const events = await play(run, plan, () => current.dispose(), violations);

      const terminals = events.filter((e) => e.type === 'run-finish' || e.type === 'run-error');
      if (terminals.length !== 1 || events.at(-1) !== terminals[0])
        violations.push(`${terminals.length} terminal events`);
      const last = events.at(-1);
      if (last?.type === 'run-finish') {
        if (last.reason === 'aborted') figures.aborted++;
        else figures.finished++;
      } else if (last?.type === 'run-error') {
        figures.failed++;
        if (!expectedErrors(plan).includes(last.error.code))
          violations.push(`run-error ${last.error.code}: ${last.error.message}`);
      }

      // A closed tab (drawn, and every 25th run): what was committed is there for the next one.
      if (current.disposed || index % 25 === 24) {
        current.dispose();
        agent = newAgent();
        await agent.ready;
        const running = await agent.memory.listRuns({ statuses: ['running'] });
        if (running.length > 0)
          violations.push(`${running.length} run(s) left running after ready`);
      }
      const detail = await agent.memory.getConversation(conversationId);
      if (!detail) violations.push('the conversation is missing');
      else {
        const complete = detail.messages.filter((record) => record.status === 'complete');
        violations.push(...unpairedToolMessages(complete));
        if (!complete.some((record) => record.message.content === `Soak run ${plan.seed}`))
          violations.push('the run’s input is missing');
      }

      // No tool worker outlives what the pool keeps: the policy worker and the fresh ones.
      const live = () => agent.sandboxStats().test?.live ?? 0;
      for (let tries = 0; tries < 40 && live() > 1 + POOL_SIZE; tries++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      if (live() > 1 + POOL_SIZE)
        violations.push(`tool workers alive: ${JSON.stringify(agent.sandboxStats())}`);
      const targets = await commands.workerTargets();
      if (targets !== null) figures.workerTargetsMax = Math.max(figures.workerTargetsMax, targets);

      if (index % 50 === 0) {
        const memory = (performance as Performance & { memory?: { usedJSHeapSize: number } })
          .memory;
        if (memory) figures.heapBytes.push(memory.usedJSHeapSize);
      }
      if (workerErrors.length > 0)
        violations.push(`agent worker threw: ${workerErrors.splice(0).join('; ')}`);
      figures.runs++;
      for (const what of violations) {
        figures.violations.push({ seed: plan.seed, what });
        console.error(`soak violation in run seed ${plan.seed} (${JSON.stringify(plan)}): ${what}`);
      }
    }
  } finally {
    agent.dispose();
  }
  const report = {
    ...figures,
    seed: baseSeed,
    durationMs: Math.round(performance.now() - started),
    at: new Date().toISOString(),
  };
  await commands.writeSoakReport(JSON.stringify(report, null, 2));
  expect(figures.violations).toEqual([]);
  expect(figures.runs).toBe(runs);
  // Without a forced GC the heap is noisy: it may settle higher after warm-up, but must not
  // keep growing run over run (the samples are in the report for a closer look).
  const [, warm = 0] = figures.heapBytes;
  const last = figures.heapBytes.at(-1) ?? 0;
  if (figures.heapBytes.length >= 4) expect(last).toBeLessThan(warm * 2 + 16 * 1024 * 1024);
}, 3_600_000);
