import type { FinishReason as AiFinishReason, UIMessageChunk } from 'ai';
import type { AgentEvent, RunFinishReason } from '../protocol/events';
import type { AirlockDataParts, AirlockMessageMetadata } from './message-parts';

type ReasoningDeltaEvent = Extract<AgentEvent, { type: 'reasoning-delta' }>;

type Chunk = UIMessageChunk<AirlockMessageMetadata, AirlockDataParts>;

/** Airlock's error code for a call the user declined: the SDK shows it as `output-denied`. */
const REJECTED = 'tool-rejected';

/**
 * Turns one run's events into UI message chunks, keeping what the chunk protocol needs
 * across events: the open text and reasoning parts, the calls of the step, the approvals
 * waiting. One mapper lives as long as its run, across the UI streams that show it (a
 * run paused for approval goes on in the next stream).
 */
export class EventChunkMapper {
  readonly #prefix: string;
  #textId: string | undefined;
  #reasoningId: string | undefined;
  #parts = 0;
  #stepOpen = false;
  /** Calls of the current step that have no result yet. */
  readonly #unsettled = new Set<string>();
  /** Approval ids asked for and not answered yet, with their call ids. */
  readonly #awaiting = new Map<string, string>();
  #lastFinishReason: string | null = null;
  /** Calls of the current step whose input is streaming, with the arguments so far. */
  readonly #streaming = new Map<string, { readonly toolName: string; text: string }>();
  /** Every call shown so far, so a part is never updated before it exists. */
  readonly #calls = new Map<string, { readonly toolName: string; input: unknown }>();

  /** `prefix` makes part ids unique across runs of one chat. */
  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  /** Approvals the run waits for (approval id → call id). */
  get awaitingApprovals(): ReadonlyMap<string, string> {
    return this.#awaiting;
  }

  /**
   * True when the run can go no further without an answer: an approval is open and every
   * other call of the step has its result. The UI stream ends there so the user can answer.
   */
  get paused(): boolean {
    if (this.#awaiting.size === 0) return false;
    const awaitingCalls = new Set(this.#awaiting.values());
    return [...this.#unsettled].every((callId) => awaitingCalls.has(callId));
  }

  /** Marks an approval as answered (the next stream continues the run). */
  answered(approvalId: string): void {
    this.#awaiting.delete(approvalId);
  }

  /** The chunks that open a UI stream: a new message, or the continuation of the paused one. */
  open(continuation: boolean, messageId: string | undefined): Chunk[] {
    return [
      continuation || messageId === undefined ? { type: 'start' } : { type: 'start', messageId },
    ];
  }

  /** The chunks that end a UI stream whose run now waits for approval. */
  pause(metadata: AirlockMessageMetadata): Chunk[] {
    return [
      ...this.#closeParts(),
      {
        type: 'finish',
        finishReason: 'tool-calls',
        messageMetadata: { ...metadata, awaitingApproval: true },
      },
    ];
  }

  /** The chunks that show the open approvals again (for a chat that reconnects to a paused run). */
  replayAwaiting(): Chunk[] {
    return [...this.#awaiting].flatMap(([approvalId, callId]) => {
      const call = this.#calls.get(callId);
      return [
        {
          type: 'tool-input-available',
          toolCallId: callId,
          toolName: call?.toolName ?? 'unknown',
          input: call?.input ?? null,
        },
        { type: 'tool-approval-request', approvalId, toolCallId: callId },
      ];
    });
  }

  /** The chunks one event becomes (often none or one). */
  map(event: AgentEvent): Chunk[] {
    const chunks: Chunk[] = [];
    switch (event.type) {
      case 'reasoning-delta':
        return this.#reasoning(event);
      case 'run-start':
        return [
          { type: 'message-metadata', messageMetadata: { runId: event.runId, model: event.model } },
        ];
      case 'step-start':
        this.#stepOpen = true;
        this.#unsettled.clear();
        this.#streaming.clear();
        return [{ type: 'start-step' }];
      case 'text-delta':
        return this.#text(event.delta);
      case 'output-delta':
        return [
          {
            type: 'data-output',
            id: this.#id(`output-${event.step}`),
            data: { step: event.step, partial: event.partial },
          },
        ];
      case 'text-rewrite':
        return [
          ...this.#closeParts(),
          {
            type: 'data-text-rewrite',
            id: this.#id(`rewrite-${event.step}`),
            data: { step: event.step, text: event.text, guardrails: event.guardrails },
          },
        ];
      case 'step-restarted':
        return this.#restarted(event);
      case 'tool-call-start':
        this.#streaming.set(event.callId, { toolName: event.toolName, text: '' });
        return [
          ...this.#closeParts(),
          { type: 'tool-input-start', toolCallId: event.callId, toolName: event.toolName },
        ];
      case 'tool-call-delta': {
        const streaming = this.#streaming.get(event.callId);
        if (streaming) streaming.text += event.argumentsDelta;
        return [
          {
            type: 'tool-input-delta',
            toolCallId: event.callId,
            inputTextDelta: event.argumentsDelta,
          },
        ];
      }
      case 'tool-call':
        this.#streaming.delete(event.callId);
        this.#unsettled.add(event.callId);
        this.#calls.set(event.callId, {
          toolName: event.toolName,
          input: event.arguments ?? event.argumentsText,
        });
        return [
          ...this.#closeParts(),
          event.arguments === undefined
            ? {
                type: 'tool-input-error',
                toolCallId: event.callId,
                toolName: event.toolName,
                input: event.argumentsText,
                errorText: 'The arguments are not valid JSON.',
              }
            : {
                type: 'tool-input-available',
                toolCallId: event.callId,
                toolName: event.toolName,
                input: event.arguments,
              },
        ];
      case 'approval-request':
        this.#awaiting.set(event.approvalId, event.callId);
        return [
          // A resumed run asks again for calls this stream never showed.
          ...this.#known(event.callId, event.toolName, event.arguments),
          { type: 'tool-approval-request', approvalId: event.approvalId, toolCallId: event.callId },
        ];
      case 'tool-result':
        chunks.push(...this.#known(event.callId, event.toolName, null));
        this.#unsettled.delete(event.callId);
        for (const [approvalId, callId] of this.#awaiting)
          if (callId === event.callId) this.#awaiting.delete(approvalId);
        if (event.ok)
          chunks.push({
            type: 'tool-output-available',
            toolCallId: event.callId,
            output: event.output,
          });
        else if (event.error.code === REJECTED)
          chunks.push({ type: 'tool-output-denied', toolCallId: event.callId });
        else
          chunks.push({
            type: 'tool-output-error',
            toolCallId: event.callId,
            errorText: event.error.message,
          });
        return chunks;
      case 'step-finish':
        this.#lastFinishReason = event.finishReason;
        this.#stepOpen = false;
        return [
          ...this.#closeParts(),
          {
            type: 'data-step',
            id: this.#id(`step-${event.step}`),
            data: {
              step: event.step,
              finishReason: event.finishReason,
              usage: plainUsage(event.usage),
              ...(event.cost === undefined ? {} : { cost: event.cost }),
              durationMs: event.durationMs,
            },
          },
          { type: 'finish-step' },
        ];
      case 'knowledge-used':
        return event.sources.map((source) => ({
          type: 'source-document',
          sourceId: `${source.docId}#${source.chunkIndex}`,
          mediaType: 'text/plain',
          title: source.title,
          providerMetadata: {
            airlock: {
              docId: source.docId,
              chunkIndex: source.chunkIndex,
              score: source.score,
              via: event.via,
            },
          },
        }));
      case 'rate-limit-wait':
        return [
          {
            type: 'data-rate-limit-wait',
            data: { step: event.step, waitMs: event.waitMs, limit: event.limit },
            transient: true,
          },
        ];
      case 'waiting-for-network':
        return [
          {
            type: 'data-waiting-for-network',
            data: { step: event.step, reason: event.reason, maxWaitMs: event.maxWaitMs },
            transient: true,
          },
        ];
      case 'model-route':
      case 'model-load': {
        // Both carry their fields as they are, less `type`.
        const { type, ...data } = event;
        return [{ type: `data-${type}`, data, transient: true } as Chunk];
      }
      case 'warning':
        return [
          {
            type: 'data-warning',
            data: { code: event.code, message: event.message },
            transient: true,
          },
        ];
      case 'storage-error':
        return [
          {
            type: 'data-storage-error',
            data: { code: event.error.code, message: event.error.message },
            transient: true,
          },
        ];
      case 'run-finish': {
        const usage = plainUsage(event.usage);
        const cost = event.cost === undefined ? {} : { cost: event.cost };
        return [
          ...this.#closeParts(),
          // A step cut by an abort never finished: the SDK's step is closed all the same.
          ...(this.#stepOpen ? [{ type: 'finish-step' } as const] : []),
          { type: 'data-usage', id: this.#id('usage'), data: { usage, ...cost } },
          {
            type: 'finish',
            finishReason: finishReasonOf(event.reason, this.#lastFinishReason),
            messageMetadata: {
              runId: event.runId,
              conversationId: event.conversationId,
              reason: event.reason,
              awaitingApproval: false,
              usage,
              ...cost,
            },
          },
        ];
      }
      case 'run-error':
        return [...this.#closeParts(), { type: 'error', errorText: event.error.message }];
      default:
        return [];
    }
  }

  /**
   * The network cut the step: its text so far is void, shown by a `data-step-restarted` part
   * after it (the app hides the step's text before it: UI chunks cannot take a part back), and each call it had begun ends as
   * an input error, since it never runs.
   */
  #restarted(event: Extract<AgentEvent, { type: 'step-restarted' }>): Chunk[] {
    const voided: Chunk[] = [...this.#streaming].map(([callId, call]) => ({
      type: 'tool-input-error',
      toolCallId: callId,
      toolName: call.toolName,
      input: call.text,
      errorText: 'The connection was lost while the model wrote this call; it was never run.',
    }));
    this.#streaming.clear();
    return [
      ...this.#closeParts(),
      ...voided,
      {
        type: 'data-step-restarted',
        id: this.#id(`restart-${event.step}-${event.restart}`),
        data: { step: event.step, reason: event.reason, restart: event.restart },
      },
    ];
  }

  /** A call's input part, when this mapper has not shown the call yet. */
  #known(callId: string, toolName: string, input: unknown): Chunk[] {
    if (this.#calls.has(callId)) return [];
    this.#calls.set(callId, { toolName, input });
    this.#unsettled.add(callId);
    return [{ type: 'tool-input-available', toolCallId: callId, toolName, input }];
  }

  #text(delta: string): Chunk[] {
    const chunks: Chunk[] = [];
    if (this.#reasoningId !== undefined) {
      chunks.push({ type: 'reasoning-end', id: this.#reasoningId });
      this.#reasoningId = undefined;
    }
    if (this.#textId === undefined) {
      this.#textId = this.#id(`text-${++this.#parts}`);
      chunks.push({ type: 'text-start', id: this.#textId });
    }
    chunks.push({ type: 'text-delta', id: this.#textId, delta });
    return chunks;
  }

  #reasoning(event: ReasoningDeltaEvent): Chunk[] {
    const chunks: Chunk[] = [];
    if (this.#textId !== undefined) {
      chunks.push({ type: 'text-end', id: this.#textId });
      this.#textId = undefined;
    }
    if (this.#reasoningId === undefined) {
      this.#reasoningId = this.#id(`reasoning-${++this.#parts}`);
      chunks.push({ type: 'reasoning-start', id: this.#reasoningId });
    }
    chunks.push({ type: 'reasoning-delta', id: this.#reasoningId, delta: event.delta });
    return chunks;
  }

  /** Ends the open text and reasoning parts (a tool call, a step's end or the run's end closes them). */
  #closeParts(): Chunk[] {
    const chunks: Chunk[] = [];
    if (this.#reasoningId !== undefined)
      chunks.push({ type: 'reasoning-end', id: this.#reasoningId });
    if (this.#textId !== undefined) chunks.push({ type: 'text-end', id: this.#textId });
    this.#reasoningId = undefined;
    this.#textId = undefined;
    return chunks;
  }

  #id(name: string): string {
    return `${this.#prefix}-${name}`;
  }
}

/** Usage without the `estimated` flag's absence turning into an `undefined` field. */
function plainUsage(usage: {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
}) {
  return {
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    totalTokens: usage.totalTokens,
  };
}

/** The SDK's finish reason for how the run ended and why its last model call stopped. */
function finishReasonOf(reason: RunFinishReason, lastStep: string | null): AiFinishReason {
  if (reason === 'aborted') return 'other';
  if (reason === 'max-steps') return 'tool-calls';
  if (lastStep === 'length') return 'length';
  if (lastStep === 'content_filter') return 'content-filter';
  return 'stop';
}
