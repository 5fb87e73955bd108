// One model response streamed: text, reasoning and tool-call deltas accumulated and sent as events.
import { AirlockError, isAirlockError } from '../../errors/airlock-error';
import type { ChatModel, ModelRequest } from '../../model/chat-model';
import {
  estimateRequestTokens,
  estimateTextTokens,
  type TokenCalibration,
} from '../../model/estimate-tokens';
import type { ChatToolCall, FinishReason, ReasoningItem, Usage } from '../../protocol/chat';
import type { AgentEvent } from '../../protocol/events';
import { loadChunk } from '../../runtime/load-chunk';
import { assignCallId } from './call-ids';

/** What one streamed model response amounted to. */
export interface StepResponse {
  readonly text: string;
  /** The reasoning text streamed, empty when none was. */
  readonly reasoning: string;
  /** Reasoning items to send back with the step's message (Responses API). */
  readonly reasoningItems: readonly ReasoningItem[];
  readonly toolCalls: readonly ChatToolCall[];
  readonly finishReason: FinishReason;
  readonly usage: Usage;
}

/** Where a step reports as it streams. */
export interface StepStreamContext {
  readonly step: number;
  readonly model: ChatModel;
  readonly request: ModelRequest;
  readonly signal: AbortSignal;
  readonly idleTimeoutMs: number;
  readonly emit: (event: AgentEvent) => Promise<void>;
  /** Call ids already in the run's history; the step's calls get ids not among them (and are added). */
  readonly callIds: Set<string>;
  /** The run asked for structured output: its text streams `output-delta` events too. */
  readonly partialOutput?: boolean;
  /** The agent's token calibration: taught by reported usage, applied to estimated usage. */
  readonly tokens?: TokenCalibration;
}

interface PendingToolCall {
  id: string;
  name: string;
  arguments: string;
  /** How long `arguments` was when its partial value was last read. */
  readLength: number;
}

/**
 * Whether a growing text is worth parsing again: at its start, then once it has grown by a
 * sixteenth (and at least 32 characters) since the last read, so a long value streamed in
 * small deltas costs a bounded number of parses instead of one per delta.
 */
function worthReading(readLength: number, length: number): boolean {
  return readLength === 0 || length - readLength >= Math.max(32, length / 16);
}

/** The JSON reader, loaded the first time a response streams tool arguments or structured output. */
const jsonReader = () =>
  loadChunk('structured-output', () => import('../../model/structured-output'));

export const NO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/**
 * Streams one model response, forwarding text and tool-call deltas as events and
 * accumulating tool calls by index (continuation chunks carry nothing else). Returns
 * what was received; deciding whether it is complete is the caller's job.
 */
export async function streamStep(context: StepStreamContext): Promise<StepResponse> {
  const { step, emit } = context;
  let text = '';
  let reasoning = '';
  const reasoningItems: ReasoningItem[] = [];
  let finishReason: FinishReason = null;
  let usage: Usage | undefined;
  const calls: PendingToolCall[] = [];
  /** How long the text was when its partial output was last read. */
  let outputReadLength = 0;
  const emitPartialOutput = async () => {
    outputReadLength = text.length;
    const partial = (await jsonReader()).partialJson(text);
    if (partial !== undefined) await emit({ type: 'output-delta', step, partial });
  };

  const parts = context.model.stream(context.request, {
    signal: context.signal,
    idleTimeoutMs: context.idleTimeoutMs,
    onRateLimitWait: (wait) => emit({ type: 'rate-limit-wait', step, ...wait }),
    onNetworkWait: (wait) => emit({ type: 'waiting-for-network', step, ...wait }),
    onRoute: (choice) => emit({ type: 'model-route', step, ...choice }),
    onLoad: (progress) => emit({ type: 'model-load', step, ...progress }),
  });
  let received = false;
  try {
    for await (const part of parts) {
      received = true;
      switch (part.type) {
        case 'text-delta':
          text += part.delta;
          await emit({ type: 'text-delta', step, delta: part.delta });
          if (context.partialOutput && worthReading(outputReadLength, text.length))
            await emitPartialOutput();
          break;
        case 'tool-call-delta': {
          let call = calls[part.index];
          if (!call) {
            if (!part.name) {
              throw new AirlockError(
                'model-stream-malformed',
                `Tool call ${part.index} began without a name.`,
              );
            }
            call = {
              id: assignCallId(part.id, context.callIds),
              name: part.name,
              arguments: '',
              readLength: 0,
            };
            calls[part.index] = call;
            await emit({ type: 'tool-call-start', step, callId: call.id, toolName: call.name });
          }
          if (part.argumentsDelta) {
            call.arguments += part.argumentsDelta;
            let partial: unknown;
            if (worthReading(call.readLength, call.arguments.length)) {
              call.readLength = call.arguments.length;
              partial = (await jsonReader()).partialJson(call.arguments);
            }
            await emit({
              type: 'tool-call-delta',
              step,
              callId: call.id,
              argumentsDelta: part.argumentsDelta,
              ...(partial === undefined ? {} : { partialArguments: partial }),
            });
          }
          break;
        }
        case 'reasoning-delta':
          reasoning += part.delta;
          await emit({ type: 'reasoning-delta', step, delta: part.delta });
          break;
        case 'reasoning-item':
          reasoningItems.push(part.item);
          break;
        case 'finish':
          finishReason = part.finishReason;
          break;
        case 'usage':
          usage = part.usage;
          break;
      }
    }
    // The last partial output is the whole text, read or not by the throttle.
    if (context.partialOutput && text.length > outputReadLength) await emitPartialOutput();
  } catch (error) {
    throw withReceived(error, text, calls.filter(Boolean).length);
  }
  const toolCalls = calls
    .filter((call): call is PendingToolCall => call !== undefined)
    .map((call) => ({
      id: call.id,
      type: 'function' as const,
      function: { name: call.name, arguments: call.arguments },
    }));
  if (usage && !usage.estimated)
    context.tokens?.observe(estimateRequestTokens(context.request), usage.promptTokens);
  return {
    text,
    reasoning,
    reasoningItems,
    toolCalls,
    finishReason,
    usage:
      usage ??
      (!received && context.signal.aborted
        ? NO_USAGE
        : // Reasoning is output too, and billed as such.
          estimateUsage(context.request, reasoning + text, toolCalls, context.tokens)),
  };
}

/**
 * A stream that broke (cut, silent, malformed) says how much of the response had arrived:
 * the text the page was shown (kept as `interrupted` by the journal) and the tool calls
 * that had started (never run).
 */
function withReceived(error: unknown, text: string, pendingToolCalls: number): unknown {
  if (!isAirlockError(error) || !error.code.startsWith('model-stream-')) return error;
  return new AirlockError(error.code, error.message, {
    details: { ...error.details, receivedChars: text.length, pendingToolCalls },
    cause: error.cause,
  });
}

/**
 * Usage for a response whose server reported none (some OpenAI-compatible servers ignore
 * `stream_options`), estimated (and corrected by what earlier calls reported), so budgets
 * still hold. (A call aborted before anything arrived counts as nothing: it may never have
 * been sent.)
 */
function estimateUsage(
  request: ModelRequest,
  text: string,
  toolCalls: readonly ChatToolCall[],
  tokens: TokenCalibration | undefined,
): Usage {
  const scale = (estimate: number) => tokens?.scale(estimate) ?? estimate;
  const promptTokens = scale(estimateRequestTokens(request));
  const completionTokens = scale(
    toolCalls.reduce(
      (sum, call) =>
        sum + estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments),
      estimateTextTokens(text),
    ),
  );
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    estimated: true,
  };
}

/** Adds two usage counts; the sum is estimated if either part is. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    ...(a.estimated || b.estimated ? { estimated: true } : {}),
  };
}
