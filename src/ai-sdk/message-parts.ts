// What the transport puts on the AI SDK's UI messages: their metadata and their data parts,
// shared by the live stream (event-chunks.ts) and the messages loaded from the store
// (stored-messages.ts).
import type { RunFinishReason } from '../protocol/events';
import type { ModelLoadProgress } from '../protocol/model-load';
import type { PassedOverRoute } from '../protocol/model-routes';

/** The metadata the transport puts on each assistant message (`message.metadata`). */
export interface AirlockMessageMetadata {
  /** The run that wrote the message. */
  readonly runId?: string;
  readonly conversationId?: string;
  readonly model?: string;
  /** How the run ended; absent while it waits for approval. */
  readonly reason?: RunFinishReason;
  /** True while the run waits for `addToolApprovalResponse`. */
  readonly awaitingApproval?: boolean;
  /**
   * True on a stored turn the model endpoint refused (`input-refused`): its user message and
   * what the run stored. It is never sent to the model again; show it as not sent.
   */
  readonly refused?: boolean;
  readonly usage?: {
    readonly promptTokens: number;
    readonly completionTokens: number;
    readonly totalTokens: number;
  };
  readonly cost?: number;
}

/**
 * The data parts the transport streams (`data-<name>` parts of the assistant message):
 * each step's summary, the run's usage, structured output as it streams, and a guardrail's
 * rewrite of the answer. Warnings, storage errors and rate-limit waits are transient: they
 * reach `onData` and are not kept in the message.
 */
export interface AirlockDataParts {
  step: {
    step: number;
    finishReason: string | null;
    usage: { promptTokens: number; completionTokens: number; totalTokens: number };
    cost?: number;
    durationMs: number;
  };
  usage: {
    usage: { promptTokens: number; completionTokens: number; totalTokens: number };
    cost?: number;
  };
  output: { step: number; partial: unknown };
  'text-rewrite': { step: number; text: string; guardrails: readonly string[] };
  warning: { code: string; message: string };
  'storage-error': { code: string; message: string };
  'rate-limit-wait': { step: number; waitMs: number; limit: 'requests' | 'tokens' };
  'waiting-for-network': { step: number; reason: 'offline' | 'unreachable'; maxWaitMs: number };
  'model-route': { step: number; route: string; passedOver: readonly PassedOverRoute[] };
  /** The step's on-device model loads (see the `model-load` event). */
  'model-load': { step: number } & ModelLoadProgress;
  /**
   * The network cut step `step`'s stream and it was asked for again: the message's text and
   * reasoning parts of that step before this part are void (hide them).
   */
  'step-restarted': { step: number; reason: 'connection-lost'; restart: number };
  /**
   * Follows the partial text of a cut run (`loadChatMessages`): the stored message `seq` is
   * `interrupted`, shown but never sent to the model.
   */
  interrupted: { seq: number };
  /** A stored user message's image or file, by reference (`loadChatMessages`). */
  attachment: { hash: string; mediaType: string; size: number; filename?: string };
  [key: string]: unknown;
}
