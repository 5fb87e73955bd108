// The tool step: a step's tool calls run (those a resume has not settled), each checkpointed
// in the journal as it starts and settles, and the images they returned made into a message.
import { AirlockError } from '../../errors/airlock-error';
import type { ChatMessage, ChatToolCall } from '../../protocol/chat';
import { loadChunk } from '../../runtime/load-chunk';
import type { ToolImagesMessage } from '../context/tool-images';
import { runToolCalls, type ToolCallResult } from '../tools/run-tool-calls';
import { formatToolOutput, isErrorOutput } from '../tools/tool-message';
import type { AssistantMessage, ResumedStep, RunContext, ToolMessage } from './loop-context';

/** What a step's tools gave: their results in call order, and the images they returned. */
export interface ToolStep {
  readonly results: readonly ToolCallResult[];
  /** The step's assistant message, then its tool messages in call order. */
  readonly messages: readonly ChatMessage[];
  /** The images the tools returned: the message sent to the model, and the one stored. */
  readonly images?: ToolImagesMessage;
}

/** Runs the step's tool calls (none for a final answer) and gathers what they returned. */
export async function toolStep(
  context: RunContext,
  step: number,
  assistant: AssistantMessage,
  resumed: ResumedStep | undefined,
): Promise<ToolStep> {
  const results = await runStepTools(context, step, assistant, resumed);
  const messages = [assistant, ...results.map((result) => result.message)];
  // Loaded with the first tool that returns images: most tools return text.
  const images = results.some((result) => result.images?.length)
    ? await (
        await loadChunk('tool-images', () => import('../context/tool-images'))
      ).toolImagesMessage(
        results.map((result) => ({
          callId: result.message.tool_call_id,
          ...(result.images ? { images: result.images } : {}),
        })),
      )
    : undefined;
  return { results, messages, ...(images ? { images } : {}) };
}

/**
 * Runs a step's tool calls (those not settled before a resume), keeping the journal told:
 * every call that starts executing is written into the step's checkpoint before it runs,
 * and every call that settles after, so a resume never runs a call a second time. Once a
 * call waits for approval the checkpoint says so (the run waits for approval).
 */
async function runStepTools(
  context: RunContext,
  step: number,
  assistant: AssistantMessage,
  resumed: ResumedStep | undefined,
): Promise<ToolCallResult[]> {
  const calls = assistant.tool_calls ?? [];
  if (calls.length === 0) return [];
  const settled = [...(resumed?.settled ?? [])];
  const started = new Set(resumed?.started ?? []);
  // A call that started before the reload and left no result may have done its work.
  for (const call of calls) {
    if (!started.has(call.id) || settled.some((message) => message.tool_call_id === call.id))
      continue;
    settled.push(await interruptedCall(context, step, call));
  }
  const already = new Map(settled.map((message) => [message.tool_call_id, message]));
  const toRun = calls.filter((call) => !already.has(call.id));
  const awaiting = new Map<string, ChatToolCall>();
  /** A call of the step asked for approval: checkpoints say the run waits for it. */
  let asked = false;
  const checkpoint = () =>
    asked
      ? context.journal.awaitingApproval({
          step,
          assistant,
          settled,
          started: [...started],
          awaiting: [...awaiting.values()],
        })
      : context.journal.toolsRunning({ step, assistant, settled, started: [...started] });
  const { guardrails, signal } = context;
  const guardContext = { runId: context.runId, conversationId: context.conversationId };
  const results = await runToolCalls(toRun, {
    ...context.tools,
    model: context.model,
    runId: context.runId,
    conversationId: context.conversationId,
    step,
    signal,
    emit: context.emit,
    ...(guardrails.guards('toolArguments')
      ? { guardArguments: (request) => guardrails.toolArguments(request, guardContext, signal) }
      : {}),
    quarantineBudget: {
      refusal: () => context.budget.quarantineRefusal(),
      used: (usage) => {
        const cost = context.budget.recordQuarantineCall(usage);
        context.journal.usageChanged(context.budget.usage);
        return cost;
      },
    },
    startExecution: () => {
      const allowed = context.budget.tryStartToolCall();
      if (allowed) context.journal.usageChanged(context.budget.usage);
      return allowed;
    },
    beforeExecute: async (request) => {
      started.add(request.callId);
      await checkpoint();
    },
    onSettled: async (message) => {
      settled.push(message);
      awaiting.delete(message.tool_call_id);
      if (!asked || awaiting.size > 0) await checkpoint();
    },
    onAwaitingApproval: async (call) => {
      awaiting.set(call.id, call);
      asked = true;
      await checkpoint();
    },
  });
  const fresh = new Map(toRun.map((call, index) => [call.id, results[index]]));
  // In call order, the order the model expects, whichever ran before a reload.
  return calls.map((call) => {
    const before = already.get(call.id);
    if (before) return { message: before, ok: !isErrorOutput(before.content) };
    const result = fresh.get(call.id);
    if (!result)
      throw new AirlockError('internal-error', `Tool call ${call.id} produced no result.`);
    return result;
  });
}

/** The tool message (and event) of a call a reload cut short while it ran. */
async function interruptedCall(
  context: RunContext,
  step: number,
  call: ChatToolCall,
): Promise<ToolMessage> {
  const error = {
    code: 'tool-interrupted',
    message: `The page was closed while "${call.function.name}" ran, before its result was stored. It may have done its work; it was not run again.`,
  } as const;
  await context.emit({
    type: 'tool-result',
    step,
    callId: call.id,
    toolName: call.function.name,
    durationMs: 0,
    ok: false,
    error,
  });
  context.tools.audit({
    runId: context.runId,
    callId: call.id,
    toolName: call.function.name,
    arguments: call.function.arguments,
    outcome: error.code,
    durationMs: 0,
    at: Date.now(),
  });
  return {
    role: 'tool',
    tool_call_id: call.id,
    content: formatToolOutput(call.function.name, call.id, { ok: false, error }),
  };
}
