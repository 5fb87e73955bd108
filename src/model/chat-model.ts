import type { ChatMessage, FinishReason, ReasoningItem, Usage } from '../protocol/chat';
import type { RunFlow } from '../protocol/labels';
import type { ModelLoadProgress } from '../protocol/model-load';
import type { ModelOptions } from '../protocol/model-options';
import type { ModelRouteChoice } from '../protocol/model-routes';
import type { ToolDescriptor } from '../protocol/tools';
import type { ResponseFormat } from './structured-output';

/** What one model call is asked. */
export interface ModelRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolDescriptor[];
  /** The final answer must be JSON fitting this schema (sent as `response_format`). */
  readonly responseFormat?: ResponseFormat;
  /** The model name, when a run asks for another than the agent's. */
  readonly model?: string;
  /** Request fields of the run's, over the agent's `model.options`. */
  readonly options?: ModelOptions;
  /**
   * The label of what the messages carry (every confidentiality level, `untrusted` once one
   * value is, and the untrusted sources), when the run tracks labels (a `flow` policy, or the
   * run's `labels`). Absent: not known, so a route's `accepts.confidentiality` passes it over.
   */
  readonly label?: RunFlow | undefined;
}

/**
 * One piece of a streamed response, provider-neutral. Tool calls are keyed by `index`
 * because that is all a continuation chunk carries; `id` and `name` come in the first.
 */
export type ModelStreamPart =
  | { readonly type: 'text-delta'; readonly delta: string }
  | {
      readonly type: 'tool-call-delta';
      readonly index: number;
      readonly id?: string;
      readonly name?: string;
      readonly argumentsDelta: string;
    }
  /** Reasoning text (a summary, or an open model's thinking), shown but never replayed as content. */
  | { readonly type: 'reasoning-delta'; readonly delta: string }
  /** A finished reasoning item of the Responses API, to send back with the step's message. */
  | { readonly type: 'reasoning-item'; readonly item: ReasoningItem }
  | { readonly type: 'finish'; readonly finishReason: Exclude<FinishReason, null> }
  | { readonly type: 'usage'; readonly usage: Usage };

/** A model call held back by the rate limit: how long, and which bucket is empty. */
export interface RateLimitWait {
  readonly waitMs: number;
  readonly limit: 'requests' | 'tokens';
}

/**
 * A model call held back because the network is gone: the browser says it is offline, or
 * the endpoint, which answered before, could not be reached. It waits at most `maxWaitMs`.
 */
export interface NetworkWait {
  readonly reason: 'offline' | 'unreachable';
  readonly maxWaitMs: number;
}

/** Options of one streamed model call. */
export interface ModelCallOptions {
  /** Aborts the HTTP request (or the wait for the rate limit). */
  readonly signal: AbortSignal;
  /** Longest silence allowed between chunks once the response has started. */
  readonly idleTimeoutMs: number;
  /** Told (and awaited) before the call waits for the rate limit. */
  readonly onRateLimitWait?: (wait: RateLimitWait) => Promise<void> | void;
  /** Told (and awaited) once when the call starts waiting for the network. */
  readonly onNetworkWait?: (wait: NetworkWait) => Promise<void> | void;
  /**
   * Told (and awaited) once by the model router (`route([...])`) when a route answers, before
   * its first part is yielded: which route, and the routes passed over before it. Other
   * models never call it; a model that wraps another passes it on with the other options.
   */
  readonly onRoute?: (choice: ModelRouteChoice) => Promise<void> | void;
  /**
   * Told (and awaited) by a model that must check, download or load its engine or weights
   * before it answers (on-device models), as it goes. Models that need nothing never call it;
   * a model that wraps another (the router) passes it on with the other options.
   */
  readonly onLoad?: (progress: ModelLoadProgress) => Promise<void> | void;
}

/**
 * A model the loop can stream from. The loop knows only this; the one implementation
 * that imports the `openai` package lives in `openai-chat-model.ts` (Chat Completions),
 * which hands its client to `openai-responses-model.ts` for the Responses API.
 */
export interface ChatModel {
  readonly name: string;
  /**
   * Streams one response. Ends normally only after the server's end of stream; throws an
   * `AirlockError` for HTTP, connection, malformed-chunk and idle failures. A model may
   * retry a request only while it has yielded no text, reasoning or tool-call part, so a caller never
   * sees a response twice. When `signal` aborts, iteration stops (it may end early or throw).
   */
  stream(request: ModelRequest, options: ModelCallOptions): AsyncIterable<ModelStreamPart>;
  /** One response in full, without streaming (used for summaries). Throws `AirlockError`. */
  complete(
    request: ModelRequest,
    options: { readonly signal: AbortSignal },
  ): Promise<{ text: string; usage: Usage }>;
}
