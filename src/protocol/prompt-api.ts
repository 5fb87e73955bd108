// The surface of Chrome's Prompt API (`LanguageModel`) that Airlock uses and its fake
// implements, as the Web Machine Learning CG's explainer describes it
// (https://github.com/webmachinelearning/prompt-api, README at commit 04f5d0a, 2026):
// types only, so the page adapter and the fake in `airlock-agents/testing` agree on one shape.

/** Whether the model can be used: now, after a download, while one runs, or never here. */
export type LanguageModelAvailability =
  | 'unavailable'
  | 'downloadable'
  | 'downloading'
  | 'available';

/** A message of `initialPrompts`, `prompt()` or `append()`; Airlock sends text only. */
export interface LanguageModelMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** An expected input or output modality, with its languages (BCP 47). */
export interface LanguageModelExpected {
  readonly type: 'text' | 'image' | 'audio';
  readonly languages?: readonly string[];
}

/** What `availability()` and `create()` are told about the use. */
export interface LanguageModelCoreOptions {
  readonly expectedInputs?: readonly LanguageModelExpected[];
  readonly expectedOutputs?: readonly LanguageModelExpected[];
}

/** The `EventTarget` handed to `monitor`: `downloadprogress` events carry `loaded`, 0 to 1. */
export type LanguageModelMonitor = EventTarget;

/** Options of `LanguageModel.create()`. */
export interface LanguageModelCreateOptions extends LanguageModelCoreOptions {
  readonly initialPrompts?: readonly LanguageModelMessage[];
  readonly temperature?: number;
  readonly topK?: number;
  readonly signal?: AbortSignal;
  readonly monitor?: (monitor: LanguageModelMonitor) => void;
}

/** Options of `prompt()` and `promptStreaming()`. */
export interface LanguageModelPromptOptions {
  readonly signal?: AbortSignal;
  /** A JSON Schema (or a RegExp) the answer must fit. */
  readonly responseConstraint?: unknown;
}

/** A prompt: a user message as a string, or messages. */
export type LanguageModelPrompt = string | readonly LanguageModelMessage[];

/** One session with the model (an instance of `LanguageModel`). */
export interface LanguageModelSession {
  prompt(input: LanguageModelPrompt, options?: LanguageModelPromptOptions): Promise<string>;
  /** The answer as a stream of text chunks, each new text (not the text so far). */
  promptStreaming(
    input: LanguageModelPrompt,
    options?: LanguageModelPromptOptions,
  ): ReadableStream<string>;
  append(input: LanguageModelPrompt, options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Tokens `input` would take (the explainer's new name; `measureInputUsage` before it). */
  measureContextUsage?(
    input: LanguageModelPrompt,
    options?: LanguageModelPromptOptions,
  ): Promise<number>;
  measureInputUsage?(
    input: LanguageModelPrompt,
    options?: LanguageModelPromptOptions,
  ): Promise<number>;
  /** Tokens the session holds so far (`inputUsage` before the rename). */
  readonly contextUsage?: number;
  readonly inputUsage?: number;
  /** Most tokens the session holds (`inputQuota` before the rename). */
  readonly contextWindow?: number;
  readonly inputQuota?: number;
  readonly temperature?: number;
  readonly topK?: number;
  clone(options?: { readonly signal?: AbortSignal }): Promise<LanguageModelSession>;
  destroy(): void;
}

/** The model's sampling bounds (`LanguageModel.params()`; extension and experimental contexts). */
export interface LanguageModelParams {
  readonly defaultTopK: number;
  readonly maxTopK: number;
  readonly defaultTemperature: number;
  readonly maxTemperature: number;
}

/** The static side: `globalThis.LanguageModel`. */
export interface LanguageModelApi {
  availability(options?: LanguageModelCoreOptions): Promise<LanguageModelAvailability>;
  params?(): Promise<LanguageModelParams | null>;
  create(options?: LanguageModelCreateOptions): Promise<LanguageModelSession>;
}
