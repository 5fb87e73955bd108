import type { ChatModel } from '../../model/chat-model';
import type { ChatMessage, ChatToolCall } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import type { GuardrailVerdict } from '../../protocol/guardrails';
import type { CallFlow } from '../../protocol/labels';
import type {
  QuarantineCall,
  ToolCallRecord,
  ToolCallRequest,
  ToolCheck,
  ToolImage,
  ToolOutcome,
} from '../../protocol/tools';
import { loadChunk } from '../../runtime/load-chunk';
import { waitFor } from '../../timing/wait';
import { toolCancelled } from '../../tools/tool-cancelled';
import { type ToolFailure, toolFailure } from '../../tools/tool-failure';
import type { QuarantineBudget } from '../policy/budget-meter';
import { GUARDRAIL_ABORTED } from '../policy/guardrails';
import type { RunFlowTracker } from '../policy/run-flow';
import type { ApprovalGate } from './approval-gate';
import { acceptCheck, acceptOutcome, needsApproval } from './tool-answers';
import { formatToolOutput } from './tool-message';
import type { RegisteredTool, ToolRegistry } from './tool-registry';
import type { CallScope } from './tool-runner';

/** What running one step's tool calls needs. */
export interface ToolCallsContext {
  readonly runId: string;
  readonly conversationId: string;
  readonly step: number;
  readonly registry: ToolRegistry;
  /** Whether the agent and the run allow a tool. */
  readonly allowed: (toolName: string) => boolean;
  readonly approvals: ApprovalGate;
  /** Told of every settled call, for the audit log. */
  readonly audit: (record: ToolCallRecord) => void;
  readonly signal: AbortSignal;
  readonly emit: (event: AgentEvent) => Promise<void>;
  /** Told (and awaited) of each call's tool message as soon as it is settled. */
  readonly onSettled?: (message: ToolMessage) => void | Promise<void>;
  /** Told (and awaited) just before a call starts executing, so a reload never runs it twice. */
  readonly beforeExecute?: (request: ToolCallRequest) => Promise<void>;
  /** Told (and awaited) before a call waits for approval, so the wait can survive a reload. */
  readonly onAwaitingApproval?: (call: ChatToolCall) => Promise<void>;
  /** The tool-argument guardrails: asked once the arguments fit the schema, before approval. */
  readonly guardArguments?: (
    request: ToolCallRequest,
  ) => Promise<GuardrailVerdict<unknown> | typeof GUARDRAIL_ABORTED>;
  /** Counts an execution against the budgets just before it starts; false refuses it. */
  readonly startExecution?: () => boolean;
  /** The run's labels and the agent's flow policy, when it declares one. */
  readonly flow?: RunFlowTracker;
  /** The run's model, for a quarantined tool's extraction call. */
  readonly model?: ChatModel;
  /** Allows and counts a quarantined tool's extraction call against the run's budgets. */
  readonly quarantineBudget?: QuarantineBudget;
}

type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/** One finished call: the tool message for the model and whether it succeeded. */
export interface ToolCallResult {
  readonly message: ToolMessage;
  readonly ok: boolean;
  /** Images the tool returned, as it returned them (checked where they are stored). */
  readonly images?: readonly ToolImage[];
  /** A quarantined tool's extraction call, when one was made. */
  readonly quarantine?: QuarantineCall;
}

/** A call settled here: its result, and the outcome a nested call (code mode) answers with. */
interface SettledCall {
  readonly result: ToolCallResult;
  readonly outcome: ToolOutcome;
}

/** The longest a tool may run when neither it nor its toolset says. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/**
 * Runs a step's tool calls concurrently and returns their tool messages in call order
 * (the order the model expects), whatever order they finish in. Every failure, from an
 * unknown name to a killed sandbox, becomes a message the model can read and act on.
 */
export async function runToolCalls(
  calls: readonly ChatToolCall[],
  context: ToolCallsContext,
): Promise<ToolCallResult[]> {
  const parsed = await Promise.all(calls.map((call) => parseArguments(call.function.arguments)));
  // Every call is announced, complete and parsed, before any of them runs.
  for (const [index, call] of calls.entries()) {
    await context.emit(toolCallEvent(context.step, call, parsed[index]!));
  }
  return Promise.all(
    calls.map(async (call, index) => (await runToolCall(call, parsed[index]!, context)).result),
  );
}

/** The `tool-call` event; arguments that are not JSON travel as text alone (the tool message tells the model). */
function toolCallEvent(step: number, call: ChatToolCall, parsed: ParsedArguments): AgentEvent {
  const base = {
    type: 'tool-call',
    step,
    callId: call.id,
    toolName: call.function.name,
    argumentsText: call.function.arguments,
  } as const;
  if (!parsed.ok) return base;
  return parsed.repaired
    ? { ...base, arguments: parsed.value, argumentsRepaired: true }
    : { ...base, arguments: parsed.value };
}

async function runToolCall(
  call: ChatToolCall,
  parsed: ParsedArguments,
  context: ToolCallsContext,
): Promise<SettledCall> {
  const toolName = call.function.name;
  const progress: CallProgress = {
    started: performance.now(),
    arguments: parsed.ok ? parsed.value : call.function.arguments,
  };
  let outcome = await settle(call, parsed, context, progress);
  const asked = progress.asked ? context.registry.get(toolName) : undefined;
  let quarantine: QuarantineCall | undefined;
  // A quarantined tool's raw output goes only to the extraction call (a chunk: few tools have one).
  if (outcome.ok && asked?.spec.policy.quarantine)
    ({ outcome, call: quarantine } = await (
      await loadChunk('quarantine', () => import('./quarantine-call'))
    ).quarantined(context, asked.spec, outcome, call.id));
  const durationMs = performance.now() - progress.started;
  const { flow } = progress;
  // Whatever the tool's side answered (output, or an error it wrote) is now in the context.
  if (asked) context.flow?.noteResult(asked.spec, call.id);
  const base = {
    type: 'tool-result',
    step: context.step,
    callId: call.id,
    toolName,
    durationMs,
    ...(flow ? { flow } : {}),
    ...(quarantine ? { quarantine } : {}),
  } as const;
  await context.emit(
    outcome.ok
      ? { ...base, ok: true, output: outcome.output }
      : { ...base, ok: false, error: outcome.error },
  );
  context.audit({
    runId: context.runId,
    callId: call.id,
    toolName,
    arguments: progress.arguments,
    outcome: outcome.ok ? 'ok' : outcome.error.code,
    durationMs,
    at: Date.now(),
    ...(flow ? { flow } : {}),
    ...(quarantine ? { quarantine } : {}),
  });
  const message: ToolMessage = {
    role: 'tool',
    tool_call_id: call.id,
    content: formatToolOutput(toolName, call.id, outcome),
  };
  await context.onSettled?.(message);
  const images = outcome.ok ? outcome.images : undefined;
  return {
    result: {
      message,
      ok: outcome.ok,
      ...(images ? { images } : {}),
      ...(quarantine ? { quarantine } : {}),
    },
    outcome,
  };
}

/** When a call's execution started, and the arguments it was (or would be) run with. */
interface CallProgress {
  started: number;
  arguments: unknown;
  /** The tool's side answered the model (a failed check, or a run): its answer enters the context. */
  asked?: boolean;
  /** What the flow policy made of the call. */
  flow?: CallFlow;
}

/**
 * Looks the tool up, checks the call, asks the guardrails, waits for approval if needed,
 * counts it against the budget, then runs it.
 */
async function settle(
  call: ChatToolCall,
  parsed: ParsedArguments,
  context: ToolCallsContext,
  progress: CallProgress,
): Promise<ToolOutcome> {
  const toolName = call.function.name;
  const tool = context.registry.get(toolName);
  if (!tool || !context.allowed(toolName)) {
    const offered = context.registry.specs(context.allowed).map((spec) => spec.name);
    const list = offered.join(', ') || 'none';
    return tool
      ? toolFailure(
          'tool-not-allowed',
          `Tool "${toolName}" is not allowed in this run. Available tools: ${list}.`,
        )
      : toolFailure(
          'tool-not-found',
          `There is no tool named "${toolName}". Available tools: ${list}.`,
        );
  }
  if (!parsed.ok) {
    return toolFailure(
      'tool-invalid-json',
      `The arguments for tool "${toolName}" are not valid JSON (${parsed.reason}). Send a JSON object.`,
    );
  }
  let request: ToolCallRequest = { callId: call.id, toolName, arguments: parsed.value };
  const timeoutMs = tool.spec.policy.timeoutMs ?? tool.defaultTimeoutMs;
  const scope: CallScope = { runId: context.runId, conversationId: context.conversationId };
  const checkCall = (checked: ToolCallRequest) =>
    whileRunning(tool, checked, context, async () =>
      acceptCheck(await tool.runner.check(checked, timeoutMs), toolName),
    );
  let check = await checkCall(request);
  // A failed check's message was written by the tool's side: it reaches the model.
  progress.asked = !check.ok;
  if (!check.ok) return check;
  if (context.guardArguments) {
    const verdict = await context.guardArguments(request);
    if (verdict === GUARDRAIL_ABORTED) return cancelled(toolName);
    if (verdict.action === 'block') {
      return toolFailure(
        'tool-blocked',
        `The call to "${toolName}" was blocked by the guardrail "${verdict.name}": ${verdict.reason}`,
      );
    }
    if (verdict.rewrittenBy.length > 0) {
      // The rewrite is checked like the model's arguments: against the schema and the approval rule.
      const rewritten: ToolCallRequest = { ...request, arguments: verdict.value };
      request = rewritten;
      progress.arguments = verdict.value;
      check = await checkCall(rewritten);
      progress.asked = !check.ok;
      if (!check.ok) return check;
    }
  }
  const verdict = context.flow?.decide(tool.spec, check);
  if (verdict) progress.flow = verdict.flow;
  if (verdict?.action === 'refuse') return toolFailure('flow-refused', verdict.message);
  const flowAsks = verdict?.action === 'approve';
  // The toolset's declared policy decides; a check's answer counts only for a rule of the arguments.
  if (flowAsks || needsApproval(tool.spec, check)) {
    await context.onAwaitingApproval?.(call);
    const approval = context.approvals.request(context.signal);
    await context.emit({
      type: 'approval-request',
      step: context.step,
      approvalId: approval.approvalId,
      callId: call.id,
      toolName,
      arguments: request.arguments,
      ...(flowAsks ? { flow: { ...verdict.flow, sources: verdict.sources } } : {}),
    });
    const decision = await approval.decision;
    if (context.signal.aborted) return cancelled(toolName);
    if (!decision.approved) {
      return toolFailure(
        'tool-rejected',
        `The user rejected this call to "${toolName}": ${decision.reason}`,
      );
    }
  }
  if (context.startExecution && !context.startExecution()) {
    return toolFailure(
      'tool-budget-exceeded',
      `The tool-call budget is spent, so "${toolName}" did not run; the run ends here.`,
    );
  }
  await context.beforeExecute?.(request);
  progress.started = performance.now();
  progress.asked = true;
  const executed = request;
  const callable = tool.spec.callableTools ?? [];
  if (callable.length === 0) {
    return whileRunning(tool, executed, context, async () =>
      acceptOutcome(await tool.runner.execute(executed, timeoutMs, scope), tool.spec),
    );
  }
  // A code tool's script calls tools of the agent's; they end when the script does.
  const scriptEnded = new AbortController();
  const nested = nestedCalls(call.id, callable, {
    ...context,
    signal: AbortSignal.any([context.signal, scriptEnded.signal]),
  });
  try {
    return await whileRunning(tool, executed, context, async () =>
      acceptOutcome(await tool.runner.execute(executed, timeoutMs, scope, nested), tool.spec),
    );
  } finally {
    scriptEnded.abort();
  }
}

/**
 * Runs the tools a code tool's script asks for, each as one more call of the step: its
 * own `tool-call` and `tool-result` events, allowlists, schema, guardrails, approval,
 * budget and audit. Only the tools the toolset declared callable are run, and never
 * another code tool; nothing is added to the conversation, since the model sees the
 * script's output instead.
 */
function nestedCalls(
  parentId: string,
  callable: readonly string[],
  context: ToolCallsContext,
): (toolName: string, args: unknown) => Promise<ToolOutcome> {
  let count = 0;
  // Persisting hooks are left out: these calls are not part of the conversation.
  const { onSettled, beforeExecute, onAwaitingApproval, ...inner } = context;
  return async (toolName, args) => {
    const grantedHere = callable.includes(toolName);
    const target = grantedHere ? context.registry.get(toolName) : undefined;
    if (!grantedHere || (target?.spec.callableTools?.length ?? 0) > 0) {
      return toolFailure(
        'tool-not-allowed',
        `The script may call only ${callable.map((name) => `tools.${name}`).join(', ')}; "${toolName}" is not one of them.`,
      );
    }
    count += 1;
    const argumentsText = JSON.stringify(args ?? {}) ?? '{}';
    const nestedCall: ChatToolCall = {
      id: `${parentId}.${count}`,
      type: 'function',
      function: { name: toolName, arguments: argumentsText },
    };
    const parsed: ParsedArguments = { ok: true, value: JSON.parse(argumentsText) as unknown };
    await inner.emit(toolCallEvent(inner.step, nestedCall, parsed));
    return (await runToolCall(nestedCall, parsed, inner)).outcome;
  };
}

/** Runs one phase of a call, but stops waiting for it (and tells the tool) when the run is aborted. */
async function whileRunning<T extends ToolCheck | ToolOutcome>(
  tool: RegisteredTool,
  request: ToolCallRequest,
  context: ToolCallsContext,
  phase: () => Promise<T>,
): Promise<T | ToolFailure> {
  const waited = await waitFor(phase(), { signal: context.signal });
  if (waited.outcome === 'settled') return waited.value;
  tool.runner.cancel(request.callId, {
    runId: context.runId,
    conversationId: context.conversationId,
  });
  return cancelled(request.toolName);
}

type ParsedArguments =
  | { ok: true; value: unknown; repaired?: true }
  | { ok: false; reason: string };

/**
 * Parses a call's argument text; an empty string means no arguments, as some servers send
 * it. Text that is not JSON is mended (small and local models often leave a brace open or a
 * key unquoted) when that gives an object; the JSON repair is loaded only then.
 */
async function parseArguments(text: string): Promise<ParsedArguments> {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const repaired = (
      await loadChunk('structured-output', () => import('../../model/structured-output'))
    ).repairArguments(text);
    if (repaired !== undefined) return { ok: true, value: repaired, repaired: true };
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

function cancelled(toolName: string): ToolFailure {
  return toolCancelled(toolName, 'the run was aborted');
}
