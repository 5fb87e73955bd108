import type { ScriptedToolCall, ScriptedTurn } from 'airlock-agents/testing/remote';

// One soak run's faults, drawn from a seed so a failing run can be replayed alone.

/** A small, fast, seedable PRNG (mulberry32): the same seed draws the same run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** What the model endpoint does wrong in a run. */
export type ModelFault = 'none' | 'rate-limited' | 'server-error' | 'cut' | 'stall' | 'garbage';

/** A tool call the model makes, by what it does to its worker. */
export type ToolFault =
  | 'echo'
  | 'sleep'
  | 'hang'
  | 'spin'
  | 'crash'
  | 'throw'
  | 'oversize'
  | 'approval-by-rule'
  | 'approval-page';

/** How the page answers an approval request. */
export type ApprovalAnswer = 'approve' | 'reject' | 'late' | 'twice';

/** Everything that goes wrong in one run. */
export interface SoakPlan {
  readonly seed: number;
  readonly model: ModelFault;
  readonly tools: readonly ToolFault[];
  readonly approval: ApprovalAnswer;
  /** Abort the run when its nth event arrives. */
  readonly abortAtEvent: number | null;
  /** Dispose the agent (a closed tab) when the run's nth event arrives, then start a new one. */
  readonly reloadAtEvent: number | null;
}

const MODEL_FAULTS: readonly ModelFault[] = [
  'rate-limited',
  'server-error',
  'cut',
  'stall',
  'garbage',
];
const TOOL_FAULTS: readonly ToolFault[] = [
  'echo',
  'sleep',
  'hang',
  'spin',
  'crash',
  'throw',
  'oversize',
  'approval-by-rule',
  'approval-page',
];
const ANSWERS: readonly ApprovalAnswer[] = ['approve', 'reject', 'late', 'twice'];

/** Draws run `seed`'s faults. */
export function drawPlan(seed: number): SoakPlan {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const chance = (p: number) => random() < p;
  const toolCount = Math.floor(random() * 3);
  return {
    seed,
    model: chance(0.3) ? pick(MODEL_FAULTS) : 'none',
    tools: Array.from({ length: toolCount }, () => pick(TOOL_FAULTS)),
    approval: pick(ANSWERS),
    abortAtEvent: chance(0.1) ? 1 + Math.floor(random() * 12) : null,
    reloadAtEvent: chance(0.05) ? 1 + Math.floor(random() * 12) : null,
  };
}

function toolCall(fault: ToolFault): ScriptedToolCall {
  switch (fault) {
    case 'echo':
      return { name: 'echo', arguments: { text: 'soak' } };
    case 'sleep':
      return { name: 'sleep', arguments: { ms: 20 } };
    case 'hang':
      return { name: 'hang', arguments: {} };
    case 'spin':
      return { name: 'spin', arguments: {} };
    case 'crash':
      return { name: 'crash', arguments: {} };
    case 'throw':
      return { name: 'throw_string', arguments: {} };
    case 'oversize':
      return { name: 'huge', arguments: {} };
    case 'approval-by-rule':
      return { name: 'write_file', arguments: { path: '/etc/soak' } };
    case 'approval-page':
      return { name: 'confirm_me', arguments: {} };
  }
}

/** The model's side of a run: a faulty first answer where drawn, tool calls, then a final answer. */
export function scriptFor(plan: SoakPlan): ScriptedTurn[] {
  const calls = plan.tools.map(toolCall);
  const first: ScriptedTurn = calls.length > 0 ? { toolCalls: calls } : { text: 'A plain answer.' };
  const final: ScriptedTurn = { text: 'All done here.' };
  switch (plan.model) {
    case 'none':
      return [first, final];
    case 'rate-limited':
      return [{ status: 429, retryAfterSeconds: 0 }, first, final];
    case 'server-error':
      return [{ status: 500 }, first, final];
    case 'cut':
      // The network cut the stream: the step is asked for again, into `first`.
      return [{ ...first, fault: { kind: 'cut', afterChunks: 2 } }, first, final];
    case 'stall':
      // Nothing was shown before the stall, so the model layer retries once, into `first`.
      return [{ ...first, fault: { kind: 'stall', afterChunks: 1 } }, first, final];
    case 'garbage':
      return [{ ...first, fault: { kind: 'malformed', afterChunks: 1 } }];
  }
}

/** Run errors a plan's faults may end a run with; any other is a violation. */
export function expectedErrors(plan: SoakPlan): readonly string[] {
  const model: Record<ModelFault, readonly string[]> = {
    none: [],
    'rate-limited': [],
    'server-error': [],
    cut: ['model-stream-truncated', 'model-unreachable'],
    stall: ['model-stream-idle'],
    garbage: ['model-stream-malformed'],
  };
  return [...model[plan.model], ...(plan.reloadAtEvent === null ? [] : ['agent-disposed'])];
}
