import type { GuardrailFlags, GuardrailHost } from '../protocol/guardrails';
import type { GuardrailOptions } from './guardrail-host';
import { lazyMethods } from './lazy-methods';

/**
 * The app's guardrails as the agent worker reaches them: which stages have any (sent with
 * the configuration, so the worker never asks for a stage that has none), and a host whose
 * code loads when the worker first asks. Most agents have no guardrails and never load it.
 */
export function lazyGuardrailHost(options: GuardrailOptions): {
  readonly flags: GuardrailFlags;
  readonly host: GuardrailHost;
} {
  // Taken now, as the app gave them: a later change to its options object changes nothing.
  const stages = { ...options };
  const has = (stage: keyof GuardrailOptions) => [stages[stage] ?? []].flat().length > 0;
  return {
    flags: { input: has('input'), output: has('output'), toolArguments: has('toolArguments') },
    host: lazyMethods<GuardrailHost>(['checkInput', 'checkOutput', 'checkToolArguments'], () =>
      import('./guardrail-host').then(({ PageGuardrailHost }) => new PageGuardrailHost(stages)),
    ),
  };
}
