// The peers bench page. The Node driver (bench/lib/peers-driver.mjs) calls `bench.setUp`
// once per contestant, then for each run `bench.run` (between two Chrome DevTools
// Protocol reads) and `bench.verify`.
import { createRemoteSession, type RemoteModelSession } from 'airlock-agents/testing/remote';
import type { Contestant, PrepareContestant, RunOutcome } from './contestant';
import type { ModalityContestant, ModalityKind, ModalitySample } from './modalities';
import { observeLongTasks, startFrameProbe } from './probes';
import type { ContestantName } from './roster';
import { INPUT, type Scenario, scenarioNamed } from './scenario';

const pageOptions = new URLSearchParams(location.search);
const modelServerUrl = pageOptions.get('model') ?? '';
const oneConversation = pageOptions.get('conversation') === 'one';

const CONTESTANTS: Record<ContestantName, () => Promise<{ prepare: PrepareContestant }>> = {
  airlock: () => import('./contestants/airlock'),
  'vercel-ai': () => import('./contestants/vercel-ai'),
  'openai-agents': () => import('./contestants/openai-agents'),
  'raw-page': () => import('./contestants/raw-page'),
  'raw-worker': () => import('./contestants/raw-worker'),
};

const WORKERS: Partial<Record<ContestantName, () => Worker>> = {
  airlock: () =>
    new Worker(new URL('./workers/airlock-agent.worker.ts', import.meta.url), { type: 'module' }),
  'raw-worker': () =>
    new Worker(new URL('./workers/raw-loop.worker.ts', import.meta.url), { type: 'module' }),
};

/** The same workers reading each response whole first: the delivery measure's source. */
const BUFFERED_WORKERS: Partial<Record<ContestantName, () => Worker>> = {
  airlock: () =>
    new Worker(new URL('./workers/airlock-agent-buffered.worker.ts', import.meta.url), {
      type: 'module',
    }),
  'raw-worker': () =>
    new Worker(new URL('./workers/raw-loop-buffered.worker.ts', import.meta.url), {
      type: 'module',
    }),
};

/** What one measured run reports; page-thread CPU comes from the driver's CDP reads. */
export interface RunSample {
  readonly wallMs: number;
  readonly firstTextMs: number;
  readonly textDeltas: number;
  /** Text-delta events per second at the page, between the first and the last. */
  readonly textDeltasPerSecond: number;
  readonly longTasks: number;
  readonly longTaskMs: number;
  readonly frames: number;
  readonly maxFrameGapMs: number;
  readonly frameGapsOver50: number;
}

const longTasks = observeLongTasks();

/** A contestant set up on this page, and the runs it has made on its model session. */
interface Entrant {
  readonly session: RemoteModelSession;
  readonly contestant: Contestant;
  /** The scenarios of its runs, in order; the session plays their turns back to back. */
  readonly scenarios: readonly Scenario[];
  /** How many runs have started. */
  runs: number;
  /** The last run's outcome and the text deltas the page got from it. */
  last?: { outcome: RunOutcome; textDeltas: number } | undefined;
  /** When the last run was called, in ms since the epoch (`performance.timeOrigin` based). */
  lastStartedAt?: number;
}

const entrants = new Map<ContestantName, Entrant>();

/**
 * Sets a contestant up once for this page (not measured): a model session that plays the
 * given scenarios' turns back to back, one run each, and the contestant's client, agent
 * or worker, which every run reuses, as an app would.
 */
async function setUp(name: ContestantName, scenarioNames: readonly string[]): Promise<void> {
  const scenarios = scenarioNames.map(scenarioNamed);
  const session = await createRemoteSession(
    modelServerUrl,
    scenarios.flatMap((scenario) => scenario.turns),
  );
  const { prepare } = await CONTESTANTS[name]();
  const buffered = scenarios.some((scenario) => scenario.name === 'delivery');
  const createWorker = (buffered ? BUFFERED_WORKERS : WORKERS)[name];
  const contestant = await prepare({
    baseURL: session.baseURL,
    database: `airlock-bench-${crypto.randomUUID()}`,
    ...(createWorker ? { createWorker } : {}),
    oneConversation,
  });
  entrants.get(name)?.contestant.dispose();
  entrants.set(name, { session, contestant, scenarios, runs: 0 });
}

function entrant(name: ContestantName): Entrant {
  const found = entrants.get(name);
  if (!found) throw new Error(`bench.setUp('${name}', …) first.`);
  return found;
}

/** The measured part: the contestant's next run to its final answer, with the page's probes on. */
async function run(name: ContestantName): Promise<RunSample> {
  const current = entrant(name);
  if (current.runs >= current.scenarios.length) throw new Error(`${name} has no scenario left.`);
  current.runs++;
  current.last = undefined;
  const frames = startFrameProbe();
  let textDeltas = 0;
  let firstText = Number.NaN;
  let lastText = Number.NaN;
  const started = performance.now();
  current.lastStartedAt = performance.timeOrigin + started;
  const outcome = await current.contestant.run(INPUT, {
    onText: () => {
      lastText = performance.now();
      if (textDeltas++ === 0) firstText = lastText;
    },
  });
  const ended = performance.now();
  const frameReport = frames.stop();
  current.last = { outcome, textDeltas };
  const stalls = longTasks.between(started, ended);
  return {
    wallMs: ended - started,
    firstTextMs: firstText - started,
    textDeltas,
    textDeltasPerSecond: textDeltas > 1 ? ((textDeltas - 1) * 1000) / (lastText - firstText) : 0,
    longTasks: stalls.length,
    longTaskMs: stalls.reduce((total, entry) => total + entry.duration, 0),
    frames: frameReport.frames,
    maxFrameGapMs: frameReport.maxGapMs,
    frameGapsOver50: frameReport.gapsOver50,
  };
}

/** Checks the last run did its whole scenario: answer, tool calls, model calls, text deltas. */
async function verify(name: ContestantName): Promise<string[]> {
  const current = entrant(name);
  const scenario = current.scenarios[current.runs - 1];
  if (!scenario || !current.last) return ['the run did not finish'];
  const { outcome, textDeltas } = current.last;
  const problems: string[] = [];
  const requests = await current.session.requests();
  const chatRequests = requests.filter((request) =>
    request.path.endsWith('/chat/completions'),
  ).length;
  const expectedRequests = current.scenarios
    .slice(0, current.runs)
    .reduce((total, each) => total + each.steps, 0);
  if (outcome.finalText !== scenario.finalText) {
    problems.push(`final answer differs: ${JSON.stringify(outcome.finalText.slice(0, 80))}…`);
  }
  if (outcome.toolCalls !== scenario.toolCalls) {
    problems.push(`${outcome.toolCalls} tool call(s) ran, expected ${scenario.toolCalls}`);
  }
  if (outcome.steps !== scenario.steps || chatRequests !== expectedRequests) {
    problems.push(
      `${outcome.steps} step(s) reported and ${chatRequests} model call(s) made in all, expected ${scenario.steps} and ${expectedRequests}`,
    );
  }
  if (textDeltas !== scenario.textDeltas) {
    problems.push(`${textDeltas} text deltas reached the page, expected ${scenario.textDeltas}`);
  }
  return problems;
}

/**
 * When the contestant's last run was called, on the clock workers share with the page
 * (`performance.timeOrigin + performance.now()`): what `npm run bench:lab:first-text -- --phases`
 * measures the worker's marks from.
 */
function lastRunStartedAt(name: ContestantName): number {
  const startedAt = entrant(name).lastStartedAt;
  if (startedAt === undefined) throw new Error(`${name} has not run yet.`);
  return startedAt;
}

/** Raw MessagePort throughput: a worker posts `count` small messages; events per second at the page. */
async function portThroughput(count: number): Promise<number> {
  const worker = new Worker(new URL('./workers/port-flood.worker.ts', import.meta.url), {
    type: 'module',
  });
  const channel = new MessageChannel();
  try {
    return await new Promise<number>((resolve) => {
      let received = 0;
      let first = 0;
      channel.port1.onmessage = () => {
        const now = performance.now();
        if (received++ === 0) first = now;
        if (received === count) resolve(((count - 1) * 1000) / (now - first));
      };
      worker.postMessage({ count }, [channel.port2]);
    });
  } finally {
    channel.port1.close();
    worker.terminate();
  }
}

/** Structured-output or image runs of Airlock or the Vercel AI SDK (`modalities.ts`, loaded on use). */
async function modalities(
  contestant: ModalityContestant,
  kind: ModalityKind,
  runs: number,
): Promise<ModalitySample[]> {
  const { runModality } = await import('./modalities');
  return runModality(modelServerUrl, contestant, kind, runs);
}

Object.assign(globalThis, {
  bench: { setUp, run, verify, lastRunStartedAt, portThroughput, modalities },
});
document.getElementById('log')!.textContent = 'ready';
(globalThis as { benchReady?: boolean }).benchReady = true;
