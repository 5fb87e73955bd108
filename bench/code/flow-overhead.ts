// The per-step cost of information-flow labels (#50), measured as the issue asks: two warm
// agents, one with a `flow` policy and one without, each created and warmed once (chunks
// loaded, first runs done), then many interleaved runs of the same multi-step run. What is
// left between the two is what the labels cost per step, not the chunk's first load.
import { type Agent, type AgentOptions, createAgent } from 'airlock-agents';
import { createRemoteSession, type ScriptedTurn } from 'airlock-agents/testing/remote';
import type { ToolSpec } from '../../src/protocol/tools';
import { RunFlowTracker } from '../../src/worker/policy/run-flow';
import { medianInterval, type Summary, summarize } from '../stats';

/** Tool steps per run; the run has one more step, its final answer. */
const TOOL_STEPS = 10;
/** Runs each agent makes before measuring: the first loads its chunks, the next warm the JIT. */
const WARM_UP_RUNS = 3;

/**
 * Pairs in a full bench run: the 95 % interval of the median of 40 is its 14th to 27th
 * sorted share. While that interval holds the goal's bound, pairs are added 20 at a time,
 * up to `MAX_PAIRS`, as the scale page does with its bursts.
 */
export const FLOW_PAIRS = 40;
const MORE_PAIRS = 20;
const MAX_PAIRS = 200;

/** The goal of #50: labels cost at most this share of a step. */
export const FLOW_OVERHEAD_GOAL_PCT = 2;

/** A 95 % interval of a median, rounded to 0.01. */
interface Interval {
  readonly low: number;
  readonly high: number;
}

/** What the flow cost is measured as: per-step times with and without, and their paired difference. */
export interface FlowCost {
  /** Pairs measured (one run with the policy and one without, order alternating). */
  readonly pairs: number;
  /** Model steps per run (ten tool steps and the answer). */
  readonly steps: number;
  /** A run's median step (`step-finish` `durationMs`, timed in the agent worker) without a flow policy, ms. */
  readonly stepMsWithout: Summary;
  /** The same with the `flow` policy, ms. */
  readonly stepMsWith: Summary;
  /** Each pair's difference of median steps (with − without), as a share of the one without, %. */
  readonly overheadPct: Summary;
  /** The 95 % distribution-free interval of `overheadPct`'s median, %. */
  readonly overheadPctInterval: Interval | null;
  /** The same from wall time (`run()` to its last event, over the steps): the whole run's share, %. */
  readonly wallOverheadPct: Summary;
  readonly wallOverheadPctInterval: Interval | null;
  /** Whether the goal (≤ 2 %) holds for the median step: the interval under it, over it, or across it. */
  readonly verdict: 'holds' | 'missed' | 'undecided';
}

/** An agent that times one run of the bench's turns. */
interface BenchAgent {
  readonly agent: Agent;
  timedRun(turns: ScriptedTurn[]): Promise<TimedRun>;
}

/** One measured run: its wall time and its median step, ms. */
interface TimedRun {
  readonly wallMs: number;
  readonly stepMs: number;
}

/**
 * Runs interleaved pairs of a ten-tool-step run on two warm agents (one with `flow`, one
 * without) and returns the per-step times and their paired difference.
 */
export async function flowCost(
  options: {
    readonly modelServerUrl: string;
    readonly agentOptions: Omit<AgentOptions, 'model'>;
    readonly flow: NonNullable<AgentOptions['flow']>;
  },
  pairs: number,
): Promise<FlowCost> {
  const turns: ScriptedTurn[] = [
    ...Array.from({ length: TOOL_STEPS }, (_, key) => ({
      toolCalls: [{ name: 'lookup', arguments: { key } }],
    })),
    { text: 'The total is 285.' },
  ];
  // Two agents of each kind, made in the order on, off, off, on: a worker that happens to
  // run faster (its thread's placement, its JIT's luck) then favours neither side.
  const withFlow = { ...options.agentOptions, flow: options.flow };
  const made: BenchAgent[] = [];
  const agentFor = async (agentOptions: Omit<AgentOptions, 'model'>) => {
    const agent = await warmAgent(options.modelServerUrl, `${made.length}`, agentOptions);
    made.push(agent);
    return agent;
  };
  try {
    const on1 = await agentFor(withFlow);
    const off1 = await agentFor(options.agentOptions);
    const off2 = await agentFor(options.agentOptions);
    const on2 = await agentFor(withFlow);
    for (let i = 0; i < WARM_UP_RUNS; i++) for (const agent of made) await agent.timedRun(turns);
    const withRuns: TimedRun[] = [];
    const withoutRuns: TimedRun[] = [];
    const measurePair = async () => {
      // Order alternates, so a drift of the machine's load within a pair favours neither side.
      const onFirst = withRuns.length % 2 === 0;
      // Each pair of pairs on the other two agents.
      const [on, off] = withRuns.length % 4 < 2 ? [on1, off1] : [on2, off2];
      const first = await (onFirst ? on : off).timedRun(turns);
      const second = await (onFirst ? off : on).timedRun(turns);
      withRuns.push(onFirst ? first : second);
      withoutRuns.push(onFirst ? second : first);
    };
    const shares = (of: (run: TimedRun) => number) =>
      withRuns.map((run, index) => {
        const without = of(withoutRuns[index] as TimedRun);
        return ((of(run) - without) / without) * 100;
      });
    while (withRuns.length < pairs) await measurePair();
    // Pairs are added while the interval holds the bound: more pairs narrow it.
    while (
      pairs > 1 &&
      verdictOf(medianInterval(shares((run) => run.stepMs))) === 'undecided' &&
      withRuns.length < MAX_PAIRS
    )
      for (let i = 0; i < MORE_PAIRS; i++) await measurePair();
    const stepShares = shares((run) => run.stepMs);
    const wallShares = shares((run) => run.wallMs / turns.length);
    const interval = medianInterval(stepShares);
    return {
      pairs: withRuns.length,
      steps: turns.length,
      stepMsWithout: summarize(withoutRuns.map((run) => run.stepMs)),
      stepMsWith: summarize(withRuns.map((run) => run.stepMs)),
      overheadPct: summarize(stepShares),
      overheadPctInterval: rounded(interval),
      wallOverheadPct: summarize(wallShares),
      wallOverheadPctInterval: rounded(medianInterval(wallShares)),
      verdict: verdictOf(interval),
    };
  } finally {
    for (const { agent } of made) agent.dispose();
  }
}

function verdictOf(interval: Interval | undefined): FlowCost['verdict'] {
  if (!interval) return 'undecided';
  if (interval.high <= FLOW_OVERHEAD_GOAL_PCT) return 'holds';
  return interval.low > FLOW_OVERHEAD_GOAL_PCT ? 'missed' : 'undecided';
}

function rounded(interval: Interval | undefined): Interval | null {
  if (!interval) return null;
  const round = (value: number) => Math.round(value * 100) / 100;
  return { low: round(interval.low), high: round(interval.high) };
}

/**
 * An agent on a model session of its own, ready, that times one run of `turns`, each run in
 * a new conversation (so no run's history grows the next one's context).
 */
async function warmAgent(
  modelServerUrl: string,
  name: string,
  agentOptions: Omit<AgentOptions, 'model'>,
): Promise<BenchAgent> {
  const session = await createRemoteSession(modelServerUrl, []);
  const agent: Agent = createAgent({
    ...agentOptions,
    model: { baseURL: session.baseURL, model: 'bench' },
  });
  await agent.ready;
  let runs = 0;
  const timedRun = async (turns: ScriptedTurn[]): Promise<TimedRun> => {
    // Scripted outside the timed part: only the run itself is measured.
    await session.replaceTurns(turns);
    runs += 1;
    const stepsMs: number[] = [];
    const started = performance.now();
    for await (const event of agent.run('bench', { conversationId: `flow-${name}-${runs}` })) {
      if (event.type === 'step-finish') stepsMs.push(event.durationMs);
      if (event.type === 'run-error' || (event.type === 'tool-result' && !event.ok))
        throw new Error(`The flow bench run failed: ${JSON.stringify(event)}`);
    }
    const wallMs = performance.now() - started;
    if (stepsMs.length !== turns.length)
      throw new Error(`The flow bench run made ${stepsMs.length} steps, not ${turns.length}.`);
    return { wallMs, stepMs: summarize(stepsMs).p50 };
  };
  return { agent, timedRun };
}

/**
 * The label tracker's own work per step, µs, timed alone on the page's thread: what the
 * request's label, the call's decision and the result's join cost in a run of the bench's
 * shape, without the storage and event work around them. Medians of batches, so a batch
 * the machine preempted does not move it much; a floor under the figure above, not a part of it.
 */
export function trackerStepUs(batches: number): Summary {
  const spec: ToolSpec = {
    name: 'lookup',
    description: '',
    parameters: {},
    policy: { approval: 'never' },
  };
  const runsPerBatch = 200;
  const samples: number[] = [];
  let kept = 0;
  for (let batch = 0; batch < batches; batch++) {
    const started = performance.now();
    for (let run = 0; run < runsPerBatch; run++) {
      const tracker = new RunFlowTracker({ untrustedToSink: 'approve' }, undefined, (flow) => {
        kept += flow.sources.length;
      });
      tracker.noteContext([{ role: 'user', content: 'bench' }]);
      for (let step = 0; step <= TOOL_STEPS; step++) {
        kept += tracker.state.sources.length;
        if (step === TOOL_STEPS) break;
        kept += tracker.decide(spec, { ok: true, needsApproval: false })?.message.length ?? 0;
        tracker.noteResult(spec, `call_${run}_${step}`);
      }
    }
    samples.push(((performance.now() - started) * 1000) / (runsPerBatch * (TOOL_STEPS + 1)));
  }
  // Read, so the work above is not optimised away.
  if (kept < 0) throw new Error('unreachable');
  return summarize(samples);
}
