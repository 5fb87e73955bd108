import type { GuardrailFlags, GuardrailHost } from '../protocol/guardrails';
import type { GuardrailOptions } from './guardrail-host';
import { lazyMethods } from './lazy-methods';

/**
 * Which stages have guardrails, sent with the configuration so the worker never asks for
 * a stage that has none.
 */
export function guardrailFlags(options: GuardrailOptions): GuardrailFlags {
  const has = (stage: keyof GuardrailOptions) => [options[stage] ?? []].flat().length > 0;
  return { input: has('input'), output: has('output'), toolArguments: has('toolArguments') };
}

/**
 * The app's guardrails as the agent worker reaches them: a host whose code loads when the
 * worker first asks. Most agents have no guardrails and never load it.
 */
export function lazyGuardrailHost(options: GuardrailOptions): GuardrailHost {
  return lazyMethods<GuardrailHost>(['checkInput', 'checkOutput', 'checkToolArguments'], () =>
    import('./guardrail-host').then(({ PageGuardrailHost }) => new PageGuardrailHost(options)),
  );
}
