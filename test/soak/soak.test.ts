import { type AgentEvent, type AgentRun, createAgent, isAirlockError, tool } from 'airlock-agents';
import { createRemoteSession, type RemoteModelSession } from 'airlock-agents/testing/remote';
import { expect, inject, it } from 'vitest';
import { commands, server } from 'vitest/browser';
import { z } from 'zod';
import {
  effectCounts,
  effectProblems,
  resentRefusals,
  terminalProblems,
  unpairedToolMessages,
} from './soak-checks';
import {
  asksApproval,
  drawPlan,
  effectRun,
  expectedErrors,
  FINAL,
  replacesAgent,
  type SoakPlan,
  scriptFor,
} from './soak-plan';

declare module 'vitest/browser' {
  interface BrowserCommands {
    /** Dedicated worker targets the browser reports (CDP); null without CDP. */
    workerTargets: () => Promise<number | null>;
    /** Writes one engine's soak figures where `npm run soak` asked for them (a no-op otherwise). */
    writeSoakReport: (engine: string, report: string) => Promise<void>;
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
  /** Runs whose tab closed before they ended (nothing more of them was read). */
  closed: number;
  /** Interrupted runs a new agent resumed, and how they ended. */
  resumed: number;
  /** Side-effect tool calls counted outside the browser, and their executions. */
  effectCalls: number;
  effectExecutions: number;
  /** Side-effect calls cut by a crash or a closed tab, marked `tool-interrupted` by the resume. */
  effectCallsInterrupted: number;
  faults: Record<string, number>;
  violations: { seed: number; what: string }[];
  heapBytes: number[];
  workerTargetsMax: number | null;
}

const confirmMe = tool({
  name: 'confirm_me',
  description: 'A page tool that always asks first.',
  parameters: z.object({}),
  needsApproval: true,
  execute: () => 'confirmed',
});

/** The page-side twin of the tool worker's `record_effect`: its work is counted outside the browser. */
const recordEffectPage = tool({
  name: 'record_effect_page',
  description: 'Reports its call to a server outside the browser; asks first.',
  parameters: z.object({ url: z.string(), run: z.string(), ask: z.boolean(), holdMs: z.number() }),
  needsApproval: true,
  execute: async ({ url, run }, { callId }) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run, callId }),
    });
    if (!response.ok) throw new Error(`The side-effect server answered ${response.status}.`);
    return { recorded: callId };
  },
});

/** An agent on `database`, and the agent worker it started (for the soak to crash). */
function startAgent(baseURL: string, database: string, onWorkerError: (message: string) => void) {
  let agentWorker: Worker | undefined;
  const agent = createAgent({
    worker: () => {
      // Written out where it is used: Vite bundles a worker only in this form (in tests,
      // vitest then also gives the worker what its dynamic imports need).
      agentWorker = new Worker(new URL('../browser/fixtures/agent.worker.ts', import.meta.url), {
        type: 'module',
      });
      agentWorker.addEventListener('error', (event) => onWorkerError(event.message));
      return agentWorker;
    },
    model: { baseURL, model: 'airlock-test-model', maxRetries: 2 },
    tools: [confirmMe, recordEffectPage],
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
  return { agent, crash: () => agentWorker?.terminate() };
}

/** What the page does to its agent when a plan says so. */
interface Interruptions {
  /** A reload: the agent is disposed. */
  reload: () => void;
  /** The agent worker dies under the page, which then disposes the agent. */
  crash: () => void;
  /** The tab is gone: the worker ends and the page reads nothing more. */
  closeTab: () => void;
}

/**
 * Plays one run as the plan says; returns its events, and whether the tab closed under it.
 * A resumed run is played without the plan's interruptions, its approvals approved.
 */
async function play(
  run: AgentRun,
  plan: SoakPlan,
  interruptions: Interruptions | null,
  violations: string[],
): Promise<{ events: AgentEvent[]; closed: boolean }> {
  const events: AgentEvent[] = [];
  let reloadedInApproval = false;
  let effectsCut = 0;
  // Read by hand: leaving a `for await` would cancel the run, and a closed tab cancels nothing.
  const iterator = run[Symbol.asyncIterator]();
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    const event = next.value;
    events.push(event);
    if (interruptions) {
      if (events.length === plan.abortAtEvent) run.abort();
      if (events.length === plan.reloadAtEvent) interruptions.reload();
      if (events.length === plan.crashAtEvent) interruptions.crash();
      if (events.length === plan.closeTabAtEvent) {
        interruptions.closeTab();
        return { events, closed: true };
      }
    }
    if (
      interruptions &&
      plan.cutMidEffect &&
      event.type === 'tool-call' &&
      event.toolName === 'record_effect' &&
      event.argumentsText.includes('"holdMs":300') &&
      effectsCut++ === 0
    ) {
      // The slow call holds 300 ms after its POST: cut it in the middle of that.
      await new Promise((resolve) => setTimeout(resolve, 150));
      if (plan.cutMidEffect === 'crash') interruptions.crash();
      else {
        interruptions.closeTab();
        return { events, closed: true };
      }
    }
    if (event.type !== 'approval-request') continue;
    if (interruptions && plan.approvalReload && !reloadedInApproval) {
      reloadedInApproval = true;
      if (plan.approvalReload === 'crash') interruptions.crash();
      else interruptions.reload();
      continue;
    }
    const answer = interruptions ? plan.approval : 'approve';
    const decide = () =>
      answer === 'reject' ? run.reject(event.approvalId) : run.approve(event.approvalId);
    // Refused only when the run already ended (an abort, a reload, a crash).
    const refusedAsEnded = (error: unknown) => {
      if (!isAirlockError(error, 'approval-already-decided'))
        violations.push(`decision refused: ${error}`);
    };
    if (answer === 'late') {
      await new Promise((resolve) => setTimeout(resolve, 40));
      await decide().catch(refusedAsEnded);
      continue;
    }
    await decide().catch(refusedAsEnded);
    if (answer === 'twice') {
      const second = await run.approve(event.approvalId).then(
        () => 'taken',
        (error: unknown) =>
          isAirlockError(error, 'approval-already-decided') ? 'refused' : String(error),
      );
      if (second !== 'refused') violations.push(`a second decision was ${second}`);
    }
  }
  return { events, closed: false };
}

it('keeps every invariant through runs of seeded faults', async () => {
  const runs = inject('soakRuns');
  const baseSeed = inject('soakSeed');
  const serverUrl = inject('modelServerUrl');
  const effectsUrl = inject('sideEffectsUrl');
  const database = `soak-${baseSeed}-${crypto.randomUUID()}`;
  const figures: Figures = {
    runs: 0,
    finished: 0,
    failed: 0,
    aborted: 0,
    closed: 0,
    resumed: 0,
    effectCalls: 0,
    effectExecutions: 0,
    effectCallsInterrupted: 0,
    faults: {},
    violations: [],
    heapBytes: [],
    workerTargetsMax: null,
  };
  const workerErrors: string[] = [];
  /** Inputs the endpoint refused: none may reach it again. */
  const refusedInputs = new Set<string>();
  // A new session with every new agent keeps each request log short enough to read after every run.
  let session: RemoteModelSession;
  let checkedRequests = 0;
  const newAgent = async () => {
    session = await createRemoteSession(serverUrl, []);
    checkedRequests = 0;
    return startAgent(session.baseURL, database, (message) => workerErrors.push(message));
  };
  let { agent, crash } = await newAgent();
  const count = (kind: string) => {
    figures.faults[kind] = (figures.faults[kind] ?? 0) + 1;
  };
  const tally = (events: readonly AgentEvent[]) => {
    const last = events.at(-1);
    if (last?.type === 'run-finish') {
      if (last.reason === 'aborted') figures.aborted++;
      else figures.finished++;
    } else if (last?.type === 'run-error') figures.failed++;
  };
  const started = performance.now();
  try {
    for (let index = 0; index < runs; index++) {
      const plan = drawPlan(baseSeed + index);
      const violations: string[] = [];
      await session!.replaceTurns(scriptFor(plan, effectsUrl));
      if (plan.model !== 'none') count(`model:${plan.model}`);
      for (const fault of plan.tools) count(`tool:${fault}`);
      if (plan.tools.some(asksApproval)) count(`approval:${plan.approval}`);
      if (plan.abortAtEvent !== null) count('abort');
      if (plan.reloadAtEvent !== null) count('reload');
      if (plan.crashAtEvent !== null) count('worker-crash');
      if (plan.closeTabAtEvent !== null) count('tab-close');
      if (plan.approvalReload !== null) count(`approval-${plan.approvalReload}`);
      if (plan.cutMidEffect !== null) count(`mid-effect-${plan.cutMidEffect}`);
      if (plan.duplicateIds) count('duplicate-call-ids');

      const current = agent;
      const crashCurrent = crash;
      const conversationId = `soak-${index % 7}`;
      const input = `Soak run ${plan.seed}`;
      const run = current.run(input, { conversationId });
      const { events, closed } = await play(
        run,
        plan,
        {
          reload: () => current.dispose(),
          crash: () => {
            crashCurrent();
            current.dispose();
          },
          closeTab: crashCurrent,
        },
        violations,
      );
      if (closed) figures.closed++;
      else {
        violations.push(...terminalProblems(events, expectedErrors(plan)));
        tally(events);
      }
      const last = events.at(-1);
      const refused = last?.type === 'run-error' && last.error.code === 'input-refused';
      const runIds = [
        ...new Set(events.flatMap((event) => (event.type === 'run-start' ? [event.runId] : []))),
      ];

      // A new page (drawn, and every 25th run): what was committed is there for the next one,
      // no run is left running once it is ready, and an interrupted run of this plan goes on.
      if (closed || current.disposed || index % 25 === 24) {
        // A closed tab's page-side leftovers (its tool workers) end with it, as the browser would.
        current.dispose();
        ({ agent, crash } = await newAgent());
        await agent.ready;
        const running = await agent.memory.listRuns({ statuses: ['running'] });
        if (running.length > 0)
          violations.push(`${running.length} run(s) left running after ready`);
        if (replacesAgent(plan)) {
          await session!.replaceTurns([FINAL, FINAL, FINAL]);
          const waiting = await agent.memory.listRuns({
            conversationId,
            statuses: ['interrupted', 'awaiting-approval'],
          });
          for (const record of waiting.filter((record) => record.input === input)) {
            if (!runIds.includes(record.id)) runIds.push(record.id);
            const resumed = await play(agent.resume(record.id), plan, null, violations);
            figures.resumed++;
            violations.push(...terminalProblems(resumed.events, expectedErrors(plan)));
            tally(resumed.events);
          }
        }
      }

      // Each call ran at most once, counted outside the browser, and left its result or marker.
      const effects = await effectCounts(effectsUrl, effectRun(plan));
      figures.effectCalls += Object.keys(effects).length;
      figures.effectExecutions += Object.values(effects).reduce((sum, times) => sum + times, 0);
      const checked = await effectProblems(agent, conversationId, runIds, effects);
      violations.push(...checked.problems);
      figures.effectCallsInterrupted += checked.interrupted;

      const detail = await agent.memory.getConversation(conversationId);
      if (!detail) violations.push('the conversation is missing');
      else {
        const complete = detail.messages.filter((record) => record.status === 'complete');
        violations.push(...unpairedToolMessages(complete));
        const stored = detail.messages.find((record) => record.message.content === input);
        const wanted = refused ? 'refused' : 'complete';
        // A run cut before it stored anything (no run row) may have lost its input with the tab.
        if (stored?.status !== wanted && runIds.length > 0)
          violations.push(
            `the run’s input is ${stored ? stored.status : 'missing'}, not ${wanted}`,
          );
      }
      const log = await session!.requests();
      violations.push(...resentRefusals(log, checkedRequests, refusedInputs));
      checkedRequests = log.length;
      // Sent by this run's requests, up to the refusal; by none after.
      if (refused) refusedInputs.add(input);

      // No tool worker outlives what the pool keeps: the policy worker and the fresh ones.
      const live = () => agent.sandboxStats().test?.live ?? 0;
      for (let tries = 0; tries < 40 && live() > 1 + POOL_SIZE; tries++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      if (live() > 1 + POOL_SIZE)
        violations.push(`tool workers alive: ${JSON.stringify(agent.sandboxStats())}`);
      const targets = await commands.workerTargets();
      if (targets !== null)
        figures.workerTargetsMax = Math.max(figures.workerTargetsMax ?? 0, targets);

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
    engine: server.browser,
    seed: baseSeed,
    durationMs: Math.round(performance.now() - started),
    at: new Date().toISOString(),
  };
  await commands.writeSoakReport(server.browser, JSON.stringify(report));
  expect(figures.violations).toEqual([]);
  expect(figures.runs).toBe(runs);
  // Without a forced GC the heap is noisy: it may settle higher after warm-up, but must not
  // keep growing run over run (the samples are in the report for a closer look).
  const [, warm = 0] = figures.heapBytes;
  const lastHeap = figures.heapBytes.at(-1) ?? 0;
  if (figures.heapBytes.length >= 4) expect(lastHeap).toBeLessThan(warm * 2 + 16 * 1024 * 1024);
}, 3_600_000);
