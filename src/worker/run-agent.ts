import { AirlockError } from '../errors/airlock-error';
import type { ChatModel } from '../model/chat-model';
import type { ChatMessage, Usage } from '../protocol/chat';
import type { AgentEvent, RunResult, StepSummary } from '../protocol/events';
import type { AgentConfig } from '../protocol/wire';
import { addUsage, NO_USAGE, type StepResponse, streamStep } from './stream-step';
import { parseArguments, runToolCalls, type ToolCallsContext } from './tools/run-tool-calls';
import { TOOL_OUTPUT_NOTICE } from './tools/tool-message';

/** Everything one run needs; the run owns nothing it is handed. */
export interface RunContext {
  readonly runId: string;
  readonly input: string;
  readonly config: AgentConfig;
  readonly model: ChatModel;
  /** The agent's tools and the run's allowlist, approvals and audit log. */
  readonly tools: Pick<ToolCallsContext, 'registry' | 'allowed' | 'approvals' | 'audit'>;
  /** Earlier turns of the conversation, replayed before the input. */
  readonly history: readonly ChatMessage[];
  readonly signal: AbortSignal;
  readonly emit: (event: AgentEvent) => Promise<void>;
}

/** A finished run: its result and the messages it added to the conversation. */
export interface RunOutcome {
  readonly result: RunResult;
  /** The input and every completed step; a step cut short by abort is left out. */
  readonly messages: readonly ChatMessage[];
}

/**
 * The ReAct loop: stream a response, run the tools it asks for, feed their results
 * back, until a final answer, `maxSteps`, or abort. Throws `AirlockError` on failure;
 * a response that did not finish properly never has its tools run.
 */
export async function runAgent(context: RunContext): Promise<RunOutcome> {
  const { config, signal, emit } = context;
  const added: ChatMessage[] = [{ role: 'user', content: context.input }];
  const tools = context.tools.registry.specs(context.tools.allowed);
  const system = systemMessages(config, tools.length > 0);
  const steps: StepSummary[] = [];
  let usage: Usage = NO_USAGE;
  let lastText = '';

  const finish = (reason: RunResult['reason']): RunOutcome => ({
    result: { runId: context.runId, reason, text: lastText, steps, usage },
    messages: added,
  });

  for (let step = 1; step <= config.limits.maxSteps; step++) {
    if (signal.aborted) return finish('aborted');
    const started = performance.now();
    await emit({ type: 'step-start', step });
    const response = await streamStep({
      step,
      model: context.model,
      request: { messages: [...system, ...context.history, ...added], tools },
      signal,
      idleTimeoutMs: config.limits.streamIdleTimeoutMs,
      emit,
    });
    lastText = response.text;
    usage = addUsage(usage, response.usage);
    if (signal.aborted) return finish('aborted');
    assertComplete(response);

    added.push({
      role: 'assistant',
      content: response.text || null,
      ...(response.toolCalls.length > 0 ? { tool_calls: response.toolCalls } : {}),
    });
    let toolCalls: StepSummary['toolCalls'] = [];
    if (response.toolCalls.length > 0) {
      for (const call of response.toolCalls) await emit(toolCallEvent(step, call));
      const results = await runToolCalls(response.toolCalls, {
        ...context.tools,
        runId: context.runId,
        step,
        signal,
        emit,
      });
      // Tool messages go in even after an abort, so the history never holds a call without its result.
      for (const { message } of results) added.push(message);
      toolCalls = response.toolCalls.map((call, index) => ({
        callId: call.id,
        toolName: call.function.name,
        ok: results[index]?.ok ?? false,
      }));
    }
    const durationMs = performance.now() - started;
    steps.push({
      step,
      finishReason: response.finishReason,
      text: response.text,
      toolCalls,
      usage: response.usage,
      durationMs,
    });
    await emit({
      type: 'step-finish',
      step,
      finishReason: response.finishReason,
      usage: response.usage,
      durationMs,
    });
    if (signal.aborted) return finish('aborted');
    if (response.toolCalls.length === 0) return finish('stop');
  }
  return finish('max-steps');
}

function systemMessages(config: AgentConfig, offersTools: boolean): ChatMessage[] {
  const parts = [config.instructions, offersTools ? TOOL_OUTPUT_NOTICE : undefined].filter(Boolean);
  return parts.length > 0 ? [{ role: 'system', content: parts.join('\n\n') }] : [];
}

/**
 * Only a response the model finished may act. Some OpenAI-compatible servers end a
 * tool-calling response with `stop`, so tool calls are judged by their presence.
 */
function assertComplete(response: StepResponse): void {
  switch (response.finishReason) {
    case 'stop':
    case 'tool_calls':
      return;
    case null:
      throw new AirlockError(
        'model-stream-truncated',
        'The model stream ended without a finish reason; the response is incomplete and its tool calls were not run.',
        { details: { pendingToolCalls: response.toolCalls.length } },
      );
    case 'length':
      throw new AirlockError(
        'model-output-truncated',
        'The model hit its output token limit (finish_reason "length"); its tool calls were not run.',
        { details: { pendingToolCalls: response.toolCalls.length } },
      );
    case 'content_filter':
      throw new AirlockError(
        'model-content-filtered',
        'The model output was withheld by a content filter.',
      );
  }
}

function toolCallEvent(step: number, call: StepResponse['toolCalls'][number]): AgentEvent {
  const base = {
    type: 'tool-call',
    step,
    callId: call.id,
    toolName: call.function.name,
    argumentsText: call.function.arguments,
  } as const;
  const parsed = parseArguments(call.function.arguments);
  // Not JSON: the event carries the text alone and the tool message tells the model.
  return parsed.ok ? { ...base, arguments: parsed.value } : base;
}
