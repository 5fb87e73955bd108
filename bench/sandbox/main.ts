import { type AgentEvent, createAgent } from 'airlock-agents';
import { createRemoteSession, type ScriptedTurn } from 'airlock-agents/testing/remote';
import { SandboxHost } from '../../src/page/sandbox-host';
import type { SandboxResponse } from '../../src/protocol/sandbox-wire';
import { reportBench } from '../page-report';
import { type Summary, summarize } from '../stats';
import toolsUrl from './tools.worker.ts?worker&url';

const modelServerUrl = new URLSearchParams(location.search).get('model') ?? '';
const toolsWorker = () =>
  new Worker(new URL('./tools.worker.ts', import.meta.url), { type: 'module' });
const agentWorker = () =>
  new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' });

/** Cold start: a new tool worker, from creation until it has described its tools. */
async function coldStart(host: SandboxHost, iterations: number): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    const { workerId, port } = await host.spawn('bench');
    await new Promise<void>((resolve) => {
      port.onmessage = (message: MessageEvent<SandboxResponse>) => {
        if (message.data.kind === 'described') resolve();
      };
      port.postMessage({ kind: 'describe', id: 1 });
    });
    samples.push(performance.now() - started);
    port.close();
    host.kill(workerId);
  }
  return summarize(samples);
}

async function runScripted(turns: ScriptedTurn[], graceMs?: number): Promise<AgentEvent[]> {
  const session = await createRemoteSession(modelServerUrl, turns);
  const agent = createAgent({
    worker: agentWorker,
    model: { baseURL: session.baseURL, model: 'bench' },
    toolsets: [
      {
        name: 'bench',
        worker: toolsWorker,
        poolSize: 1,
        ...(graceMs === undefined ? {} : { graceMs }),
      },
    ],
    limits: { maxSteps: turns.length + 1 },
  });
  await agent.ready;
  const events: AgentEvent[] = [];
  for await (const event of agent.run('bench')) events.push(event);
  agent.dispose();
  return events;
}

function toolDurations(events: readonly AgentEvent[]): number[] {
  return events.flatMap((event) => (event.type === 'tool-result' ? [event.durationMs] : []));
}

/** Warm call: a tool call to an idle pooled worker, measured by the agent worker around execution. */
async function warmCall(calls: number): Promise<Summary> {
  const turns: ScriptedTurn[] = Array.from({ length: calls }, (_, i) => ({
    toolCalls: [{ name: 'echo', arguments: { text: `call ${i}` } }],
  }));
  turns.push({ text: 'done' });
  // The first call may still share the thread with the pool's warm-up; it is left out.
  return summarize(toolDurations(await runScripted(turns)).slice(1));
}

/** Kill latency: how long after its 100 ms deadline a spinning tool's call resolved, its worker killed. */
async function killLatency(iterations: number): Promise<Summary & { graceMs: number }> {
  const turns: ScriptedTurn[] = Array.from({ length: iterations }, () => ({
    toolCalls: [{ name: 'spin', arguments: {} }],
  }));
  turns.push({ text: 'done' });
  const graceMs = 30;
  const results = (await runScripted(turns, graceMs)).filter(
    (event) => event.type === 'tool-result',
  );
  const outcomes = results.map((event) =>
    event.ok ? 'ok' : `${event.error.code}: ${event.error.message}`,
  );
  if (outcomes.some((outcome) => !outcome.includes('its worker was killed'))) {
    throw new Error(`A spinning call did not end in a kill: ${outcomes.join(' | ')}`);
  }
  return { ...summarize(results.map((event) => event.durationMs - 100)), graceMs };
}

async function main(): Promise<unknown> {
  const results = {
    coldWorkerStartMs: await coldStart(
      new SandboxHost([{ name: 'bench', worker: toolsWorker }]),
      20,
    ),
    coldIframeStartMs: await coldStart(
      new SandboxHost([
        { name: 'bench', isolation: 'iframe', workerUrl: new URL(toolsUrl, location.href) },
      ]),
      20,
    ),
    warmCallMs: await warmCall(200),
    killAfterDeadlineMs: await killLatency(10),
  };
  return results;
}

reportBench(main);
