/**
 * Request fields of a model call beyond what Airlock sets itself, by their Chat Completions
 * names (the Responses API takes the ones it knows under its own names). Plain data, so it
 * crosses to the agent worker; checked on the page and again in the worker.
 */
export interface ModelOptions {
  /** Sampling temperature, 0 to 2. */
  readonly temperature?: number;
  readonly top_p?: number;
  /** The most tokens one response may take (reasoning included). */
  readonly max_completion_tokens?: number;
  /** The older name of the cap, for servers that predate `max_completion_tokens`. */
  readonly max_tokens?: number;
  readonly frequency_penalty?: number;
  readonly presence_penalty?: number;
  readonly seed?: number;
  /** Up to four sequences that end a response. */
  readonly stop?: string | readonly string[];
  /** Whether the model may ask for several tool calls in one response. */
  readonly parallel_tool_calls?: boolean;
  /**
   * How hard a reasoning model thinks: sent as `reasoning_effort` (chat) or
   * `reasoning: { effort, summary: 'auto' }` (responses). Left out: the server's default.
   */
  readonly reasoning_effort?: ReasoningEffort;
  readonly verbosity?: 'low' | 'medium' | 'high';
  readonly service_tier?: 'auto' | 'default' | 'flex' | 'scale' | 'priority';
  /** An id of the end user, for the provider's abuse monitoring. */
  readonly user?: string;
  readonly safety_identifier?: string;
  readonly prompt_cache_key?: string;
  /** Token id → bias from -100 to 100. */
  readonly logit_bias?: Readonly<Record<string, number>>;
  /**
   * Further JSON fields for OpenAI-compatible servers (e.g. `top_k`, `min_p`,
   * `repetition_penalty`), sent as given. They may not name a field listed above (use it)
   * or one Airlock sets (`model`, `messages`, `tools`, `stream`, `response_format`, …).
   */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** A reasoning model's effort. */
export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';
