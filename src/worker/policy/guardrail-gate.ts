import type * as Comlink from 'comlink';
import { z } from 'zod/mini';
import { safeParse } from '../../errors/schema-issues';
import type {
  GuardedToolCall,
  GuardrailContext,
  GuardrailFlags,
  GuardrailHost,
  GuardrailStage,
  GuardrailVerdict,
} from '../../protocol/guardrails';
import { waitFor } from '../../timing/wait';
import { describeThrown } from '../../tools/run-tool';
import { GUARDRAIL_ABORTED, type Guardrails } from './guardrails';

/**
 * The agent worker's side of the page's guardrails, for a page that has some (see
 * `guardrailsFor`). A stage without guardrails costs no round trip; a page that cannot
 * answer blocks (guardrails fail closed); an abort stops the wait at once, since a page
 * function cannot be cancelled.
 */
export class GuardrailGate implements Guardrails {
  readonly #host: Comlink.Remote<GuardrailHost> | GuardrailHost;
  readonly #flags: GuardrailFlags;

  constructor(host: Comlink.Remote<GuardrailHost> | GuardrailHost, flags: GuardrailFlags) {
    this.#host = host;
    this.#flags = flags;
  }

  guards(stage: GuardrailStage): boolean {
    return this.#flags[stage];
  }

  input(input: string, context: GuardrailContext, signal: AbortSignal) {
    return this.#ask('input', input, TEXT_VERDICT, signal, () =>
      this.#host.checkInput(input, context),
    );
  }

  output(text: string, context: GuardrailContext, signal: AbortSignal) {
    return this.#ask('output', text, TEXT_VERDICT, signal, () =>
      this.#host.checkOutput(text, context),
    );
  }

  toolArguments(call: GuardedToolCall, context: GuardrailContext, signal: AbortSignal) {
    return this.#ask('toolArguments', call.arguments, ARGUMENTS_VERDICT, signal, () =>
      this.#host.checkToolArguments(call, context),
    );
  }

  async #ask<T>(
    stage: GuardrailStage,
    value: T,
    verdictSchema: z.ZodMiniType<GuardrailVerdict<T>, unknown>,
    signal: AbortSignal,
    ask: () => Promise<unknown>,
  ): Promise<GuardrailVerdict<T> | typeof GUARDRAIL_ABORTED> {
    if (!this.#flags[stage]) return { action: 'allow', value, rewrittenBy: [] };
    const asked = ask()
      .then((answer) => readVerdict(stage, answer, verdictSchema))
      .catch(
        (error: unknown): GuardrailVerdict<T> => ({
          action: 'block',
          name: stage,
          reason: `The ${stage} guardrails could not be reached: ${describeThrown(error)}`,
        }),
      );
    const waited = await waitFor(asked, { signal });
    return waited.outcome === 'settled' ? waited.value : GUARDRAIL_ABORTED;
  }
}

/** A verdict on a value of `value`'s type, as the page sends it. */
function verdictOf<T>(value: z.ZodMiniType<T>) {
  return z.union([
    z.object({ action: z.literal('allow'), value, rewrittenBy: z.array(z.string()) }),
    z.object({ action: z.literal('block'), name: z.string(), reason: z.string() }),
  ]) as z.ZodMiniType<GuardrailVerdict<T>, unknown>;
}

// Made once: every run asks its input and output stages, guarded or not.
const TEXT_VERDICT = verdictOf(z.string());
const ARGUMENTS_VERDICT = verdictOf(z.unknown());

/**
 * A verdict as the page sent it, parsed: one that is not a verdict blocks, as a
 * guardrail that cannot be reached does (guardrails fail closed).
 */
function readVerdict<T>(
  stage: GuardrailStage,
  answer: unknown,
  verdictSchema: z.ZodMiniType<GuardrailVerdict<T>, unknown>,
): GuardrailVerdict<T> {
  const verdict = safeParse(verdictSchema, answer);
  if (verdict.success) return verdict.data;
  return {
    action: 'block',
    name: stage,
    reason: `The ${stage} guardrails answered with something that is not a verdict.`,
  };
}
