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
export type ModelFault =
  | 'none'
  | 'rate-limited'
  | 'server-error'
  | 'cut'
  | 'stall'
  | 'garbage'
  /** The first request fails at the connection (no HTTP answer), as when the network drops. */
  | 'network-drop'
  /** The endpoint refuses the run's input (400 `limit_exceeded` or 413): never to be sent again. */
  | 'refused';

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
  | 'approval-page'
  /** Side-effect tools: each execution is counted outside the browser. */
  | 'effect'
  /** Holds 300 ms after its side effect, so a crash or a closed tab lands mid-call. */
  | 'effect-slow'
  /** Asks for approval first (sandboxed). */
  | 'effect-approval'
  /** A page tool, asking for approval. */
  | 'effect-page';

/** How the page ends while the run waits for an approval: a reload (dispose) or a crash of the agent worker. */
export type ApprovalReload = 'dispose' | 'crash';

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
  /** Dispose the agent (a reload) when the run's nth event arrives, then start a new one. */
  readonly reloadAtEvent: number | null;
  /** Terminate the agent worker from the page at the nth event (a crash), then dispose and start a new agent. */
  readonly crashAtEvent: number | null;
  /** At the nth event the tab is gone: the worker ends, nothing more is read, a new agent opens the database. */
  readonly closeTabAtEvent: number | null;
  /** At the first approval request, reload or crash instead of answering; the new agent resumes the run. */
  readonly approvalReload: ApprovalReload | null;
  /**
   * While a slow side-effect call holds (its POST made, its result not yet back), the agent
   * worker crashes or the tab closes: the call ran, and the resume must mark it, not run it again.
   */
  readonly cutMidEffect: 'crash' | 'close-tab' | null;
  /** The model gives all its calls of the turn one id (a hostile endpoint). */
  readonly duplicateIds: boolean;
}

/** The run id the side-effect channel counts a plan's calls under. */
export const effectRun = (plan: SoakPlan) => `seed-${plan.seed}`;

const MODEL_FAULTS: readonly ModelFault[] = [
  'rate-limited',
  'server-error',
  'cut',
  'stall',
  'garbage',
  'network-drop',
  'refused',
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
  'effect',
  'effect',
  'effect-slow',
  'effect-slow',
  'effect-approval',
  'effect-page',
];
const ANSWERS: readonly ApprovalAnswer[] = ['approve', 'reject', 'late', 'twice'];

/** Draws run `seed`'s faults. */
export function drawPlan(seed: number): SoakPlan {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const chance = (p: number) => random() < p;
  const toolCount = Math.floor(random() * 3);
  const atEvent = (p: number) => (chance(p) ? 1 + Math.floor(random() * 12) : null);
  const model: ModelFault = chance(0.3) ? pick(MODEL_FAULTS) : 'none';
  const tools = Array.from({ length: toolCount }, () => pick(TOOL_FAULTS));
  const approval = pick(ANSWERS);
  const abortAtEvent = atEvent(0.1);
  const reloadAtEvent = atEvent(0.05);
  const crashAtEvent = atEvent(0.06);
  const closeTabAtEvent = atEvent(0.05);
  const approvalReload: ApprovalReload | null = chance(0.08)
    ? pick<ApprovalReload>(['dispose', 'crash'])
    : null;
  const cutMidEffect = chance(0.08) ? pick<'crash' | 'close-tab'>(['crash', 'close-tab']) : null;
  // A reload mid-approval needs a call that asks: a side effect, so its count proves it ran at most once.
  if (approvalReload && !tools.some(asksApproval)) tools.push('effect-approval');
  if (cutMidEffect && !tools.includes('effect-slow')) tools.push('effect-slow');
  return {
    seed,
    model,
    tools,
    approval,
    abortAtEvent,
    reloadAtEvent,
    crashAtEvent,
    closeTabAtEvent,
    approvalReload,
    cutMidEffect,
    duplicateIds: tools.length > 1 && chance(0.2),
  };
}

/** Whether a call of this kind waits for the page's approval. */
export function asksApproval(fault: ToolFault): boolean {
  return (
    fault === 'approval-by-rule' ||
    fault === 'approval-page' ||
    fault === 'effect-approval' ||
    fault === 'effect-page'
  );
}

/** Whether the plan ends its agent mid-run (a new agent then resumes the run). */
export function replacesAgent(plan: SoakPlan): boolean {
  return (
    plan.reloadAtEvent !== null ||
    plan.crashAtEvent !== null ||
    plan.closeTabAtEvent !== null ||
    plan.approvalReload !== null ||
    plan.cutMidEffect !== null
  );
}

function toolCall(fault: ToolFault, plan: SoakPlan, effectsUrl: string): ScriptedToolCall {
  const effect = (ask: boolean, holdMs: number) => ({
    url: `${effectsUrl}/effects`,
    run: effectRun(plan),
    ask,
    holdMs,
  });
  switch (fault) {
    case 'effect':
      return { name: 'record_effect', arguments: effect(false, 0) };
    case 'effect-slow':
      return { name: 'record_effect', arguments: effect(false, 300) };
    case 'effect-approval':
      return { name: 'record_effect', arguments: effect(true, 0) };
    case 'effect-page':
      return { name: 'record_effect_page', arguments: effect(true, 0) };
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

/** The model's answer after the tools, and to each step a resume asks for again. */
export const FINAL: ScriptedTurn = { text: 'All done here.' };

/** The model's side of a run: a faulty first answer where drawn, tool calls, then a final answer. */
export function scriptFor(plan: SoakPlan, effectsUrl: string): ScriptedTurn[] {
  const final = FINAL;
  const calls = plan.tools.map((fault, index) => ({
    ...toolCall(fault, plan, effectsUrl),
    id: plan.duplicateIds ? `call_${plan.seed}_dup` : `call_${plan.seed}_${index}`,
  }));
  const first: ScriptedTurn = calls.length > 0 ? { toolCalls: calls } : { text: 'A plain answer.' };
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
    case 'network-drop':
      // No byte came back, so the request is made again (the SDK's retry or the network wait).
      return [{ ...first, fault: { kind: 'reset' } }, first, final];
    case 'refused':
      return [
        plan.seed % 2 === 0
          ? { status: 400, message: 'limit_exceeded: the request carries more than allowed.' }
          : { status: 413, message: 'Request body too large.' },
      ];
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
    'network-drop': ['model-unreachable'],
    refused: ['input-refused'],
  };
  return [
    ...model[plan.model],
    ...(replacesAgent(plan) ? ['agent-disposed', 'worker-crashed'] : []),
  ];
}
