import type { AgentConfig, StorageStatus } from './agent-config';
import type { ImageDetail } from './chat';
import type { WireEvent } from './delta-runs';
import type { ErrorData } from './errors';
import type { GuardrailHost } from './guardrails';
import type { Confidentiality } from './labels';
import type { ModelOptions } from './model-options';
import type { SandboxSpawner } from './sandbox-wire';
import type { KnowledgeApi, MemoryWire } from './store-api';
import type { ToolHost, ToolSpec } from './tools';

// What crosses between the page and the agent worker for each run: the input, the run and
// resume requests, the worker's API, and the messages on a run's port.

/**
 * One part of a run's input, as the page sends it. An image is a `Blob` (a `File` is one),
 * a data URL, or an `https:` URL the model fetches itself; a file (PDF or text) is a `Blob`
 * or a data URL. Blobs and data URLs are stored in the agent's database, once per content.
 */
export type InputPart =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image';
      /** The image: a `Blob`/`File`, a `data:` URL, or an `https:` URL (a `URL` object is read as its `href`). */
      readonly image: Blob | string;
      /** The media type, when the blob's own `type` is empty or wrong. */
      readonly mediaType?: string;
      readonly detail?: ImageDetail;
      /** The attachment's own confidentiality level, joined into the run's label. */
      readonly label?: AttachmentLabel;
    }
  | {
      readonly type: 'file';
      /** The file's bytes: a `Blob`/`File` or a `data:` URL. */
      readonly data: Blob | string;
      readonly mediaType?: string;
      /** The name the model is told (default: the `File`'s name, else `file`). */
      readonly filename?: string;
      /** The attachment's own confidentiality level, joined into the run's label. */
      readonly label?: AttachmentLabel;
    };

/**
 * An attachment's label: its confidentiality level (default the run's). Its integrity is
 * always `untrusted` (the user did not type its content), so it has no field for it.
 */
export interface AttachmentLabel {
  readonly confidentiality?: Confidentiality;
}

/** What a run (or a resume) may change about its model calls, for that run alone. */
export interface RunModelOverrides {
  /** The model name sent instead of the agent's. */
  readonly model?: string;
  /** Request fields over the agent's `model.options`. */
  readonly modelOptions?: ModelOptions;
  /** The system prompt instead of the agent's `instructions`. */
  readonly instructions?: string;
  /** Page tools offered in this run beside the agent's (their code stays on the page). */
  readonly tools?: readonly ToolSpec[];
}

/**
 * One tool call a caller other than the model asks for (a WebMCP agent on the page): the
 * run makes this call, through the model's own checks, instead of asking the model.
 */
export interface DirectToolCall {
  /** Who asked; the audit row names it. */
  readonly caller: 'webmcp';
  readonly name: string;
  /** The caller's arguments: untrusted, checked against the tool's schema in the worker. */
  readonly arguments: unknown;
}

/** One run, as the page asks the agent worker for it. */
export interface RunRequest extends RunModelOverrides {
  readonly runId: string;
  /** Text, or parts with attachments (their bytes cross by structured clone). */
  readonly input: string | readonly InputPart[];
  readonly conversationId: string;
  /** Narrows the agent's tools for this run. */
  readonly allowedTools?: readonly string[];
  /** The final answer must be JSON fitting this schema (validated on the page). */
  readonly output?: OutputRequest;
  /** The label of the input (and its attachments): its confidentiality level; default `public`. */
  readonly labels?: { readonly confidentiality?: string };
  /** Run this one call instead of asking the model. */
  readonly toolCall?: DirectToolCall;
  readonly retryOf?: never;
}

/**
 * A retry of a refused turn (`agent.retryRefused`): a run of the turn's conversation whose
 * input is the turn's stored one, or `input` in its place; the turn is removed in the same
 * write that stores the new input.
 */
export interface RetryRequest extends Omit<RunRequest, 'input' | 'retryOf'> {
  /** The id of the run whose refused turn this run replaces. */
  readonly retryOf: string;
  readonly input?: RunRequest['input'];
}

/** A run's structured output, as the agent worker learns of it. */
export interface OutputRequest {
  /** The JSON Schema (draft-07) of the answer, made on the page from the app's schema. */
  readonly jsonSchema: Readonly<Record<string, unknown>>;
}

/** What configuring the agent worker came to: the tools it can offer, or why it cannot run. */
export type ConfigureResult =
  | {
      readonly ok: true;
      readonly tools: readonly string[];
      /** The tools' specs, for `exposeToWebMCP` (absent from workers older than this field). */
      readonly specs?: readonly ToolSpec[];
      /** Where the agent worker keeps its data (absent from workers older than this field). */
      readonly storage?: Pick<StorageStatus, 'backend'>;
    }
  | { readonly ok: false; readonly error: ErrorData };

/**
 * The agent worker's surface, exposed over Comlink. `configure` once, then `run` per
 * run (or `resume` for a run that waits for approval after a reload); a run's events go
 * over a port transferred for that run alone, and the call resolves when the run has
 * ended. `memory` reads and edits what is stored.
 */
export interface AgentWorkerApi {
  configure(
    config: AgentConfig,
    pageTools: ToolHost,
    sandboxes: SandboxSpawner,
    guardrails: GuardrailHost,
    /** A port to the app's tab hub (`AgentOptions.tabs`): runs are relayed to other tabs there. */
    tabHub?: MessagePort,
  ): Promise<ConfigureResult>;
  /** `runTools` serves the request's `tools` (absent when it has none). */
  run(request: RunRequest | RetryRequest, events: MessagePort, runTools?: ToolHost): Promise<void>;
  resume(request: ResumeRequest, events: MessagePort, runTools?: ToolHost): Promise<void>;
  /**
   * Follows the runs of a conversation started in any tab of the origin (on the same
   * database): their events, stops and decisions cross `events` (see `tab-relay.ts`).
   * Resolves when the page closes the watch or the agent ends.
   */
  watch(conversationId: string, events: MessagePort): Promise<void>;
  /**
   * Closes the store and resolves once none of its IndexedDB transactions is in flight, so
   * the page can terminate the worker without leaving the database unusable (WebKit).
   */
  close(): Promise<void>;
  readonly memory: MemoryWire;
  readonly knowledge: KnowledgeApi;
}

/** A run that waits for approval, picked up again after a reload. */
export interface ResumeRequest extends RunModelOverrides {
  /** The id of the run to resume (from `memory.listRuns`). */
  readonly runId: string;
  readonly allowedTools?: readonly string[];
  readonly output?: OutputRequest;
}

/**
 * Agent worker → page, on a run's event port: the events of one worker task, in order,
 * with runs of deltas packed (see `delta-runs.ts`); or whether a decision sent with
 * `approval` was taken (`error` says why it was refused).
 */
export type WorkerToPage =
  | { readonly kind: 'events'; readonly events: readonly WireEvent[] }
  | { readonly kind: 'approval-answer'; readonly approvalId: string; readonly error?: ErrorData }
  /** A final answer, parsed as JSON, for the page to validate against the run's `output` schema. */
  | { readonly kind: 'output-check'; readonly checkId: string; readonly value: unknown };

/**
 * Page → agent worker, on a run's event port. `ack` returns credit for consumed events
 * (backpressure); `cancel` aborts the run; `approval` answers the `approval-request` with
 * that `approvalId`, once; `output-verdict` answers an `output-check` (`issues` when the
 * value does not fit the schema).
 */
export type PageToWorker =
  | { readonly kind: 'ack'; readonly count: number }
  | { readonly kind: 'cancel' }
  | {
      readonly kind: 'approval';
      readonly approvalId: string;
      readonly approved: boolean;
      readonly reason?: string;
    }
  | { readonly kind: 'output-verdict'; readonly checkId: string; readonly issues?: string }
  /**
   * The page's `online` event, forwarded while the run lasts: workers get no such event in
   * some engines (Chromium), so a run waiting for the network hears of it the same way in all.
   */
  | { readonly kind: 'online' };

/**
 * Events the worker may send before the page has acknowledged any. A fast stream (one
 * read holding many chunks) produces events in one unbroken run of microtasks, and the
 * worker stops at the window until the page's acknowledgement comes back: each stop costs
 * a round trip between the threads, so a wider window stops it less often (256 was the
 * window before). Events are small (a delta is a few characters), so the bound on a slow
 * reader's queue stays small too.
 */
export const EVENT_WINDOW = 2_048;
