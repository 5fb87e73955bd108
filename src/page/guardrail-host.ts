import type {
  GuardedToolCall,
  GuardrailContext,
  GuardrailDecision,
  GuardrailFlags,
  GuardrailHost,
  GuardrailStage,
  GuardrailVerdict,
} from '../protocol/guardrails';

/** Checks (or rewrites, or blocks) the user's input before the first model call. */
export type InputGuardrail = (
  input: string,
  context: GuardrailContext,
) => GuardrailDecision<string> | Promise<GuardrailDecision<string>>;

/** Checks (or rewrites, or blocks) the final answer before it is stored and returned. */
export type OutputGuardrail = (
  text: string,
  context: GuardrailContext,
) => GuardrailDecision<string> | Promise<GuardrailDecision<string>>;

/** Checks (or rewrites, or blocks) a tool call's arguments once they fit the tool's schema. */
export type ToolArgumentsGuardrail = (
  call: GuardedToolCall,
  context: GuardrailContext,
) => GuardrailDecision<unknown> | Promise<GuardrailDecision<unknown>>;

/**
 * The app's guardrails, plain functions that run on the page: app logic and state live
 * there, and functions cannot be sent to the agent worker, which asks for them instead.
 * Each stage takes one function or several, run in order (each sees the previous
 * rewrite); the first block wins. A guardrail that throws blocks.
 */
export interface GuardrailOptions {
  readonly input?: InputGuardrail | readonly InputGuardrail[];
  readonly output?: OutputGuardrail | readonly OutputGuardrail[];
  readonly toolArguments?: ToolArgumentsGuardrail | readonly ToolArgumentsGuardrail[];
}

type AnyGuardrail<V> = (value: V, context: GuardrailContext) => unknown;

/** Runs the app's guardrails for the agent worker, which calls this object through a port of its own. */
export class PageGuardrailHost implements GuardrailHost {
  readonly #input: readonly InputGuardrail[];
  readonly #output: readonly OutputGuardrail[];
  readonly #toolArguments: readonly ToolArgumentsGuardrail[];

  constructor(options: GuardrailOptions) {
    this.#input = listOf(options.input);
    this.#output = listOf(options.output);
    this.#toolArguments = listOf(options.toolArguments);
  }

  /** Which stages have guardrails, for the worker's configuration. */
  get flags(): GuardrailFlags {
    return {
      input: this.#input.length > 0,
      output: this.#output.length > 0,
      toolArguments: this.#toolArguments.length > 0,
    };
  }

  checkInput(input: string, context: GuardrailContext): Promise<GuardrailVerdict<string>> {
    return runStage('input', this.#input, input, (value) => value, context, isString);
  }

  checkOutput(text: string, context: GuardrailContext): Promise<GuardrailVerdict<string>> {
    return runStage('output', this.#output, text, (value) => value, context, isString);
  }

  checkToolArguments(
    call: GuardedToolCall,
    context: GuardrailContext,
  ): Promise<GuardrailVerdict<unknown>> {
    return runStage(
      'toolArguments',
      this.#toolArguments,
      call.arguments,
      (value) => ({ ...call, arguments: value }),
      context,
      (_value): _value is unknown => true,
    );
  }
}

/**
 * Runs a stage's guardrails in order. Never rejects: a throw, or an answer that is not a
 * decision, blocks, because a guardrail that failed cannot vouch for the value.
 */
async function runStage<T, V>(
  stage: GuardrailStage,
  guardrails: readonly AnyGuardrail<V>[],
  initial: T,
  present: (value: T) => V,
  context: GuardrailContext,
  fits: (value: unknown) => value is T,
): Promise<GuardrailVerdict<T>> {
  let value = initial;
  const rewrittenBy: string[] = [];
  for (const [index, guardrail] of guardrails.entries()) {
    const name = guardrail.name || `${stage}[${index}]`;
    let decision: unknown;
    try {
      decision = await guardrail(present(value), context);
    } catch (error) {
      return { action: 'block', name, reason: `The guardrail failed: ${describe(error)}` };
    }
    if (!isDecision(decision)) {
      return {
        action: 'block',
        name,
        reason:
          'The guardrail returned no decision (expected { action: "allow" | "rewrite" | "block" }).',
      };
    }
    if (decision.action === 'block') return { action: 'block', name, reason: decision.reason };
    if (decision.action === 'rewrite') {
      if (!fits(decision.value)) {
        return {
          action: 'block',
          name,
          reason: 'The guardrail rewrote the value into the wrong type.',
        };
      }
      value = decision.value;
      rewrittenBy.push(name);
    }
  }
  return { action: 'allow', value, rewrittenBy };
}

function isDecision(value: unknown): value is GuardrailDecision<unknown> {
  if (typeof value !== 'object' || value === null || !('action' in value)) return false;
  switch (value.action) {
    case 'allow':
      return true;
    case 'rewrite':
      return 'value' in value;
    case 'block':
      return 'reason' in value && typeof value.reason === 'string';
    default:
      return false;
  }
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function listOf<G>(value: G | readonly G[] | undefined): readonly G[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? (value as readonly G[]) : [value as G];
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
