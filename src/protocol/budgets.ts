/**
 * What runs may spend and what they spent: budgets, prices and the rate limit, as plain
 * data that crosses from the page to the agent worker.
 */

/** Limits on what a run or a conversation may spend; every field is optional. */
export interface Budget {
  /** Model calls (steps). The call that would go over is not made. */
  readonly modelCalls?: number;
  /** Tool executions. The call that would go over does not run, and the run ends after its step. */
  readonly toolCalls?: number;
  /** Prompt tokens, as the server reports them (estimated when it reports none). */
  readonly promptTokens?: number;
  /** Completion tokens, as the server reports them (estimated when it reports none). */
  readonly completionTokens?: number;
  /** Prompt plus completion tokens. */
  readonly totalTokens?: number;
  /** Cost in the currency of `prices`; needs a price for the agent's model. */
  readonly cost?: number;
}

/** The name of one budget, as `budget-exceeded` reports it. */
export type BudgetName = keyof Budget;

/** Budgets of each run and of each conversation (all its runs together, across reloads). */
export interface Budgets {
  readonly run?: Budget;
  readonly conversation?: Budget;
}

/** What a model costs, per million tokens, in a currency of the app's choosing. */
export interface ModelPrice {
  readonly promptPerMillion: number;
  readonly completionPerMillion: number;
}

/**
 * A token-bucket limit on model calls, shared by every run of one agent: requests and
 * (estimated, then corrected) tokens per minute.
 */
export interface RateLimitConfig {
  readonly requestsPerMinute?: number;
  readonly tokensPerMinute?: number;
  /**
   * Requests that may start at once before the spacing applies (default: one second's
   * worth, at least 1), so calls are spread over the minute rather than sent in a burst.
   */
  readonly requestBurst?: number;
}

/** What one run, or all runs of a conversation, consumed. */
export interface RunUsage {
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  /** Present when the agent's model has a price. */
  readonly cost?: number;
  /** True when some token counts were estimated (the server reported no usage). */
  readonly estimated?: boolean;
}
