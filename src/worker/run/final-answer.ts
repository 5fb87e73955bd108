// The answer step: a final answer through the page's output guardrails and, when the run
// asked for structured output, read as JSON and checked by the page (sent back once if it does not fit).
import { AirlockError } from '../../errors/airlock-error';
import type { ResponseFormat } from '../../model/structured-output';
import type { AgentConfig } from '../../protocol/agent-config';
import { loadChunk } from '../../runtime/load-chunk';
import { waitFor } from '../../timing/wait';
import { GUARDRAIL_ABORTED, guardrailBlocked } from '../policy/guardrails';
import type { RunContext, RunOutput } from './loop-context';
import { reasoningOf } from './model-step';
import type { StepResponse } from './stream-step';

/** How a run asks for its structured output, reads it, and has the page check it. */
export interface StructuredRequest {
  readonly responseFormat?: ResponseFormat;
  readonly notice?: string;
  readonly readJsonAnswer: (text: string) => ReturnType<JsonReader['readJsonAnswer']>;
  readonly check: RunOutput['check'];
}

type JsonReader = typeof import('../../model/structured-output');

/** What became of a final answer: the text the run keeps for it in every case. */
export type AnswerVerdict =
  | {
      readonly verdict: 'accepted';
      readonly text: string;
      readonly output?: { readonly value: unknown };
    }
  /** The structured answer does not fit: the model is told `issues` and answers again. */
  | { readonly verdict: 'retry'; readonly text: string; readonly issues: string }
  /** The run was aborted (or ended) while the page decided: the step is saved empty. */
  | { readonly verdict: 'aborted'; readonly text: string };

/**
 * Judges a step's final answer. A guardrail's block, or a structured answer that does not
 * fit when no retry is left (`mayRetry` false), fails the run once the step is saved: a
 * blocked answer leaves nothing, an invalid one is kept in the history as the model wrote it.
 */
export async function judgeAnswer(
  context: RunContext,
  step: number,
  response: StepResponse,
  structured: StructuredRequest | undefined,
  mayRetry: boolean,
): Promise<AnswerVerdict> {
  const answer = await guardAnswer(context, step, response.text);
  if (answer.action !== 'allow') {
    // Nothing of the answer is kept (not even as interrupted text); the step's usage is.
    await context.journal.stepCompleted(step, []);
    if (answer.action === 'aborted') return { verdict: 'aborted', text: '' };
    throw guardrailBlocked('output', answer);
  }
  const { text } = answer;
  if (!structured) return { verdict: 'accepted', text };
  const checked = await checkAnswer(structured, text, context.signal);
  if (checked === undefined) {
    await context.journal.stepCompleted(step, []);
    return { verdict: 'aborted', text };
  }
  if (!('issues' in checked)) return { verdict: 'accepted', text, output: checked };
  if (mayRetry) return { verdict: 'retry', text, issues: checked.issues };
  await context.journal.stepCompleted(step, [
    { role: 'assistant', content: text, ...reasoningOf(response) },
  ]);
  throw outputInvalid(text, checked.issues);
}

/**
 * How the run asks for its structured output: as `response_format`, or (`prompted`, the
 * default with prompted tool calling) as a notice in the system message. The JSON repair
 * it needs is loaded here, so agents that never ask for structured output never load it.
 */
export async function structuredRequest(
  config: AgentConfig,
  output: RunOutput,
): Promise<StructuredRequest> {
  const reader = await loadChunk(
    'structured-output',
    () => import('../../model/structured-output'),
  );
  const mode =
    config.model.structuredOutput ??
    (config.model.toolCalling === 'prompted' ? 'prompted' : 'native');
  return {
    ...(mode === 'native'
      ? { responseFormat: reader.responseFormat(output.jsonSchema) }
      : { notice: reader.outputNotice(output.jsonSchema) }),
    readJsonAnswer: reader.readJsonAnswer,
    check: output.check,
  };
}

/** What the model is told when its structured answer does not fit. */
export function retryRequest(issues: string): string {
  return (
    `Your answer does not fit the required JSON Schema: ${issues}\n` +
    'Answer again with the corrected JSON value only.'
  );
}

/**
 * A final answer read as JSON and checked by the page: the value, what is wrong with it, or
 * undefined when the run was aborted (or ended) while the page decided.
 */
async function checkAnswer(
  structured: StructuredRequest,
  text: string,
  signal: AbortSignal,
): Promise<{ readonly value: unknown } | { readonly issues: string } | undefined> {
  const read = structured.readJsonAnswer(text);
  if (!read.ok) return { issues: read.reason };
  const waited = await waitFor(structured.check(read.value), { signal });
  if (waited.outcome !== 'settled') return undefined;
  const verdict = waited.value;
  if (verdict === undefined) return undefined;
  return verdict.issues === undefined ? { value: read.value } : { issues: verdict.issues };
}

/** The error of a run whose structured answer still did not fit after one retry. */
function outputInvalid(text: string, issues: string): AirlockError {
  return new AirlockError(
    'output-invalid',
    `The final answer does not fit the output schema: ${issues}`,
    { details: { text, issues } },
  );
}

/**
 * Puts the final answer through the page's output guardrails: the text to keep (told to
 * the page with `text-rewrite` when it changed), or why there is none.
 */
async function guardAnswer(
  context: RunContext,
  step: number,
  text: string,
): Promise<
  | { action: 'allow'; text: string }
  | { action: 'block'; name: string; reason: string }
  | { action: 'aborted' }
> {
  if (!context.guardrails.guards('output')) return { action: 'allow', text };
  const verdict = await context.guardrails.output(
    text,
    { runId: context.runId, conversationId: context.conversationId },
    context.signal,
  );
  if (verdict === GUARDRAIL_ABORTED) return { action: 'aborted' };
  if (verdict.action === 'block') return verdict;
  if (verdict.rewrittenBy.length > 0) {
    await context.emit({
      type: 'text-rewrite',
      step,
      text: verdict.value,
      guardrails: verdict.rewrittenBy,
    });
  }
  return { action: 'allow', text: verdict.value };
}
