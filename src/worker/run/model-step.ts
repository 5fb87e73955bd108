// The model step: the requests the loop sends (the first one confirmed when its context was
// a guess), one step's response streamed (or taken from a resumed checkpoint) and counted.
import { AirlockError, isAirlockError } from '../../errors/airlock-error';
import type { ChatModel, ModelRequest } from '../../model/chat-model';
import type { ResponseFormat } from '../../model/structured-output';
import type { ChatMessage, FinishReason } from '../../protocol/chat';
import { confirmedFirstCall } from './confirmed-call';
import type { AssistantMessage, ResumedStep, RunContext } from './loop-context';
import { NO_USAGE, type StepResponse, streamStep } from './stream-step';

/**
 * How often one step, and one run, asks again for a response the network cut: enough for a
 * train's tunnels, few enough that a connection cut on purpose (a proxy's time limit) ends.
 */
const MAX_STEP_RESTARTS = 3;
const MAX_RUN_RESTARTS = 6;

/** What the loop sends the model: the system message, the history, then the run's own messages. */
export interface ModelRequests {
  /** The model to stream from; its first stream waits for the context's `confirm`. */
  readonly model: ChatModel;
  /** Ids the model sees in this request's history: a new call never takes one of them. */
  readonly callIds: Set<string>;
  /** The run's own messages so far, sent after the history. */
  readonly added: ChatMessage[];
  /** The request as it stands now. */
  readonly next: () => ModelRequest;
  /** Steps of the run asked for again after the network cut their stream. */
  readonly restarts: { count: number };
}

/** How the run's structured output shapes every request: a response format or a system notice. */
export interface RequestShape {
  readonly responseFormat?: ResponseFormat;
  readonly notice?: string;
}

/** The requests of a run, from its context and the shape its structured output asks for. */
export function modelRequests(context: RunContext, shape: RequestShape | undefined): ModelRequests {
  const tools = context.tools.registry.specs(context.tools.allowed);
  const systemOf = (given: readonly ChatMessage[]) =>
    shape?.notice ? withNotice(given, shape.notice) : given;
  let system = systemOf(context.system);
  let { history } = context;
  const added: ChatMessage[] = [];
  const callIds = new Set<string>();
  const seeCallIds = (messages: readonly ChatMessage[]) => {
    for (const message of messages)
      if (message.role === 'assistant')
        for (const call of message.tool_calls ?? []) callIds.add(call.id);
  };
  seeCallIds([...history, ...(context.resume ? [context.resume.assistant] : [])]);
  const next = (): ModelRequest => ({
    messages: [...system, ...history, ...added],
    tools,
    ...(shape?.responseFormat ? { responseFormat: shape.responseFormat } : {}),
    ...context.call,
    label: context.tools.flow?.state,
  });
  const model = context.confirm
    ? confirmedFirstCall(
        context.model,
        context.confirm.then((fresh) => {
          if (!fresh) return undefined;
          system = systemOf(fresh.system);
          history = fresh.history;
          seeCallIds(history);
          return next();
        }),
      )
    : context.model;
  return { model, callIds, added, next, restarts: { count: 0 } };
}

/**
 * Streams the step's response (a resumed step's was streamed, and counted, before the
 * reload), counts it against the budget and tells the journal. Returns the response and
 * what it cost, when priced.
 */
export async function modelStep(
  context: RunContext,
  step: number,
  resumed: ResumedStep | undefined,
  requests: ModelRequests,
  partialOutput: boolean,
): Promise<{ readonly response: StepResponse; readonly cost: number | undefined }> {
  const { budget } = context;
  await context.emit({ type: 'step-start', step });
  const response = resumed
    ? resumedResponse(resumed.assistant)
    : await streamRestarting(context, step, requests, partialOutput);
  const cost = resumed ? undefined : budget.recordModelCall(response.usage);
  context.journal.usageChanged(budget.usage);
  return { response, cost };
}

/**
 * Streams the step, asking for it again when the network cut its stream (a failed read, not
 * a server's end, garbage or silence): the page is told its deltas are void, and the next
 * request goes through the model's network wait. Call ids of a void attempt are not kept.
 */
async function streamRestarting(
  context: RunContext,
  step: number,
  requests: ModelRequests,
  partialOutput: boolean,
): Promise<StepResponse> {
  for (let restart = 1; ; restart++) {
    const callIds = new Set(requests.callIds);
    try {
      const response = await streamStep({
        step,
        model: requests.model,
        request: requests.next(),
        signal: context.signal,
        idleTimeoutMs: context.config.limits.streamIdleTimeoutMs,
        emit: context.emit,
        callIds,
        partialOutput,
        ...(context.tokens ? { tokens: context.tokens } : {}),
      });
      for (const id of callIds) requests.callIds.add(id);
      return response;
    } catch (error) {
      if (
        !isAirlockError(error, 'model-stream-truncated') ||
        !error.details.connectionLost ||
        context.signal.aborted ||
        restart > MAX_STEP_RESTARTS ||
        ++requests.restarts.count > MAX_RUN_RESTARTS
      )
        throw error;
      await context.emit({ type: 'step-restarted', step, reason: 'connection-lost', restart });
    }
  }
}

/** The assistant message of a step's response, with the answer text the run keeps. */
export function assistantMessage(response: StepResponse, text: string): AssistantMessage {
  return {
    role: 'assistant',
    content: text || null,
    ...(response.toolCalls.length > 0 ? { tool_calls: response.toolCalls } : {}),
    ...reasoningOf(response),
  };
}

/** The reasoning a step's assistant message keeps: its text to show, its items to send back. */
export function reasoningOf(
  response: StepResponse,
): Pick<AssistantMessage, 'reasoning' | 'reasoningItems'> {
  return {
    ...(response.reasoning ? { reasoning: response.reasoning } : {}),
    ...(response.reasoningItems.length > 0 ? { reasoningItems: response.reasoningItems } : {}),
  };
}

/**
 * Only a response the model finished may act. Some OpenAI-compatible servers end a
 * tool-calling response with `stop`, so tool calls are judged by their presence.
 */
export function assertComplete(response: StepResponse): void {
  switch (response.finishReason) {
    case 'stop':
    case 'tool_calls':
      return;
    case null:
      throw new AirlockError(
        'model-stream-truncated',
        'The model stream ended without a finish reason; the response is incomplete and its tool calls were not run.',
        {
          details: {
            receivedChars: response.text.length,
            pendingToolCalls: response.toolCalls.length,
          },
        },
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

/** The system message with `notice` added (or a system message of it alone). */
function withNotice(system: readonly ChatMessage[], notice: string): ChatMessage[] {
  const [first] = system;
  return first?.role === 'system'
    ? [{ role: 'system', content: `${first.content}\n\n${notice}` }]
    : [{ role: 'system', content: notice }];
}

/** A resumed step's response, as it was streamed before the reload. */
function resumedResponse(assistant: AssistantMessage): StepResponse {
  return {
    text: assistant.content ?? '',
    reasoning: assistant.reasoning ?? '',
    reasoningItems: assistant.reasoningItems ?? [],
    toolCalls: assistant.tool_calls ?? [],
    finishReason: 'tool_calls' satisfies FinishReason,
    usage: NO_USAGE,
  };
}
