import { type AgentEvent, createAgent, tool } from 'airlock-agents';
import { createRemoteSession, type ScriptedTurn } from 'airlock-agents/testing/remote';
import { z } from 'zod';
import { SandboxHost } from '../../src/page/sandbox-host';
import type { SandboxResponse } from '../../src/protocol/sandbox-wire';
import { reportBench } from '../page-report';
import { type Summary, summarize } from '../stats';
import { FLOW_PAIRS, flowCost, trackerStepUs } from './flow-overhead';

const params = new URLSearchParams(location.search);
const modelServerUrl = params.get('model') ?? '';
/** `npm run bench:smoke`: one iteration of everything, to prove the page still runs. */
const smoke = params.has('smoke');
const codeWorker = () =>
  new Worker(new URL('./code.worker.ts', import.meta.url), { type: 'module' });
const agentWorker = () =>
  new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' });

/** The tool the script calls ten times, or the model calls in ten steps. */
const lookup = tool({
  name: 'lookup',
  description: 'Looks up a value.',
  parameters: z.object({ key: z.number() }),
  execute: ({ key }) => ({ key, value: key * key }),
});

const TEN_CALLS_SCRIPT = `
  let total = 0;
  for (let key = 0; key < 10; key++) total += (await tools.lookup({ key })).value;
  return total;`;

/** Cold start: a new code worker, from creation until QuickJS is loaded and its tool described. */
async function coldStart(iterations: number): Promise<Summary> {
  const host = new SandboxHost([{ name: 'code', worker: codeWorker }]);
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    const { workerId, port } = await host.spawn('code');
    await new Promise<void>((resolve, reject) => {
      port.onmessage = (message: MessageEvent<SandboxResponse>) => {
        if (message.data.kind === 'described') resolve();
        if (message.data.kind === 'unavailable') reject(new Error(message.data.reason));
      };
      port.postMessage({ kind: 'describe', id: 1 });
    });
    samples.push(performance.now() - started);
    port.close();
    host.kill(workerId);
  }
  return summarize(samples);
}

/** Runs scripted turns in a fresh agent; its events, wall time and the model calls it made. */
async function runScripted(turns: ScriptedTurn[]) {
  const session = await createRemoteSession(modelServerUrl, turns);
  const agent = createAgent({
    worker: agentWorker,
    model: { baseURL: session.baseURL, model: 'bench' },
    tools: [lookup],
    toolsets: [{ name: 'code', worker: codeWorker, poolSize: 1 }],
    limits: { maxSteps: turns.length + 1 },
  });
  await agent.ready;
  const events: AgentEvent[] = [];
  const started = performance.now();
  for await (const event of agent.run('bench')) events.push(event);
  const wallMs = performance.now() - started;
  agent.dispose();
  const failed = events.find(
    (event) => event.type === 'run-error' || (event.type === 'tool-result' && !event.ok),
  );
  if (failed) throw new Error(`The bench run failed: ${JSON.stringify(failed)}`);
  return { events, wallMs, modelCalls: (await session.requests()).length };
}

/** Warm call: a trivial script in a warm code worker, measured by the agent worker around execution. */
async function warmCall(calls: number): Promise<Summary> {
  const turns: ScriptedTurn[] = Array.from({ length: calls }, () => ({
    toolCalls: [{ name: 'run_js', arguments: { code: 'return 6 * 7;' } }],
  }));
  turns.push({ text: 'done' });
  const { events } = await runScripted(turns);
  const durations = events.flatMap((event) =>
    event.type === 'tool-result' ? [event.durationMs] : [],
  );
  // The first call may still share the thread with the pool's warm-up; it is left out.
  return summarize(durations.slice(1));
}

/** Ten lookups: in one script (code mode), and as ten model steps of one call each. */
async function tenCalls(runs: number) {
  const script: number[] = [];
  const steps: number[] = [];
  let modelCallsScript = 0;
  let modelCallsSteps = 0;
  for (let i = 0; i < runs; i++) {
    const inScript = await runScripted([
      { toolCalls: [{ name: 'run_js', arguments: { code: TEN_CALLS_SCRIPT } }] },
      { text: 'The total is 285.' },
    ]);
    const asSteps = await runScripted([
      ...Array.from({ length: 10 }, (_, key) => ({
        toolCalls: [{ name: 'lookup', arguments: { key } }],
      })),
      { text: 'The total is 285.' },
    ]);
    script.push(inScript.wallMs);
    steps.push(asSteps.wallMs);
    modelCallsScript = inScript.modelCalls;
    modelCallsSteps = asSteps.modelCalls;
  }
  return {
    tenCallsInScriptMs: summarize(script),
    tenCallsAsStepsMs: summarize(steps),
    modelCallsScript,
    modelCallsSteps,
  };
}

/** `npm run bench -- code --flow-only`: the flow-cost figure alone; `--flow-pairs=N` sets its pairs. */
const flowOnly = params.has('flowOnly');
const flowPairs = Number(params.get('flowPairs') ?? FLOW_PAIRS);

async function main(): Promise<unknown> {
  const flow = await flowCost(
    {
      modelServerUrl,
      agentOptions: {
        worker: agentWorker,
        tools: [lookup],
        limits: { maxSteps: 12 },
      },
      flow: { untrustedToSink: 'approve' },
    },
    smoke ? 1 : flowPairs,
  );
  const flowTracker = trackerStepUs(smoke ? 1 : 30);
  if (flowOnly) return { flowCost: flow, flowTrackerStepUs: flowTracker };
  return {
    coldCodeWorkerStartMs: await coldStart(smoke ? 1 : 10),
    warmCodeCallMs: await warmCall(smoke ? 3 : 100),
    ...(await tenCalls(smoke ? 1 : 5)),
    flowCost: flow,
    flowTrackerStepUs: flowTracker,
  };
}

reportBench(main);
