/**
 * Guardrails as they cross from the page to the agent worker: the app's functions stay on
 * the page (functions cannot be posted), the worker asks through this host and gets a
 * plain verdict back.
 */

/** The stages a guardrail can guard. */
export type GuardrailStage = 'input' | 'output' | 'toolArguments';

/** What a guardrail is told besides the value it checks. */
export interface GuardrailContext {
  readonly runId: string;
  readonly conversationId: string;
}

/** A tool call about to run, after its arguments passed the tool's schema. */
export interface GuardedToolCall {
  readonly callId: string;
  readonly toolName: string;
  readonly arguments: unknown;
}

/**
 * What a guardrail decides: let the value through, replace it (a new input, a new answer
 * text, new arguments), or stop it with a reason.
 */
export type GuardrailDecision<T> =
  | { readonly action: 'allow' }
  | { readonly action: 'rewrite'; readonly value: T }
  | { readonly action: 'block'; readonly reason: string };

/**
 * The verdict of all guardrails of one stage, as it crosses back to the worker: the value
 * to go on with (rewritten or not), or the guardrail that blocked and why.
 */
export type GuardrailVerdict<T> =
  | { readonly action: 'allow'; readonly value: T; readonly rewrittenBy: readonly string[] }
  | { readonly action: 'block'; readonly name: string; readonly reason: string };

/** Which stages have guardrails, so the worker skips a round trip to the page when none do. */
export type GuardrailFlags = Readonly<Record<GuardrailStage, boolean>>;

/**
 * The page side the agent worker calls (over Comlink). Each method runs every guardrail
 * of its stage in order, each seeing the previous one's rewrite, and never rejects: a
 * guardrail that throws or answers nonsense blocks (guardrails fail closed).
 */
export interface GuardrailHost {
  checkInput(input: string, context: GuardrailContext): Promise<GuardrailVerdict<string>>;
  checkOutput(text: string, context: GuardrailContext): Promise<GuardrailVerdict<string>>;
  checkToolArguments(
    call: GuardedToolCall,
    context: GuardrailContext,
  ): Promise<GuardrailVerdict<unknown>>;
}
