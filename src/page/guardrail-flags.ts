import type { GuardrailFlags } from '../protocol/guardrails';
import type { GuardrailOptions } from './guardrail-host';

/**
 * Which stages have guardrails, sent with the configuration so the worker never asks for
 * a stage that has none.
 */
export function guardrailFlags(options: GuardrailOptions): GuardrailFlags {
  const has = (stage: keyof GuardrailOptions) => [options[stage] ?? []].flat().length > 0;
  return { input: has('input'), output: has('output'), toolArguments: has('toolArguments') };
}
