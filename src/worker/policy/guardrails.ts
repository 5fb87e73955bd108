import { AirlockError } from '../../errors/airlock-error';
import type {
  GuardedToolCall,
  GuardrailContext,
  GuardrailStage,
  GuardrailVerdict,
} from '../../protocol/guardrails';

/** The run was aborted while a guardrail was deciding. */
export const GUARDRAIL_ABORTED: unique symbol = Symbol('guardrail aborted');

/** What a run asks of the page's guardrails, stage by stage. */
export interface Guardrails {
  /** Whether any guardrail guards this stage. */
  guards(stage: GuardrailStage): boolean;
  input(
    input: string,
    context: GuardrailContext,
    signal: AbortSignal,
  ): Promise<GuardrailVerdict<string> | typeof GUARDRAIL_ABORTED>;
  output(
    text: string,
    context: GuardrailContext,
    signal: AbortSignal,
  ): Promise<GuardrailVerdict<string> | typeof GUARDRAIL_ABORTED>;
  toolArguments(
    call: GuardedToolCall,
    context: GuardrailContext,
    signal: AbortSignal,
  ): Promise<GuardrailVerdict<unknown> | typeof GUARDRAIL_ABORTED>;
}

/**
 * An agent without guardrails: every stage allows at once, with no round trip (a page with
 * some gets `GuardrailGate`, loaded as a chunk).
 */
export const UNGUARDED: Guardrails = {
  guards: () => false,
  input: async (value) => ({ action: 'allow', value, rewrittenBy: [] }),
  output: async (value) => ({ action: 'allow', value, rewrittenBy: [] }),
  toolArguments: async (call) => ({ action: 'allow', value: call.arguments, rewrittenBy: [] }),
};

/** The error that ends a run whose input or output a guardrail blocked. */
export function guardrailBlocked(
  stage: 'input' | 'output',
  verdict: { readonly name: string; readonly reason: string },
): AirlockError {
  return new AirlockError(
    'guardrail-blocked',
    `The ${stage} guardrail "${verdict.name}" blocked the run: ${verdict.reason}`,
    { details: { guardrail: stage, name: verdict.name, reason: verdict.reason } },
  );
}
