// The agent loop: each step a model step, then (for a final answer) the answer step, then the
// tool step, saved to the journal and reported, until an answer, `maxSteps`, a budget, or abort.
import type { ChatMessage, Usage } from '../../protocol/chat';
import type { RunResult, StepSummary } from '../../protocol/events';
import { judgeAnswer, retryRequest, structuredRequest } from './final-answer';
import type { RunContext } from './loop-context';
import { assertComplete, assistantMessage, modelRequests, modelStep } from './model-step';
import { addUsage, NO_USAGE, type StepResponse } from './stream-step';
import { type ToolStep, toolStep } from './tool-step';

/**
 * The ReAct loop: stream a response, run the tools it asks for, feed their results
 * back, until a final answer, `maxSteps`, a budget, or abort. Every completed step goes
 * to the journal before the next model call. Throws `AirlockError` on failure; a response
 * that did not finish properly never has its tools run.
 */
export async function runAgent(context: RunContext): Promise<RunResult> {
  const { config, signal, emit, budget } = context;
  const steps: StepSummary[] = [];
  let usage: Usage = NO_USAGE;
  let cost: number | undefined;
  let lastText = '';
  /** The validated structured answer, once there is one. */
  let output: { readonly value: unknown } | undefined;
  /** A structured answer that did not fit was sent back; the next one that does not fails the run. */
  let outputRetried = false;
  const structured = context.output ? await structuredRequest(config, context.output) : undefined;
  const requests = modelRequests(context, structured);
  const finish = (reason: RunResult['reason']): RunResult => {
    // Quarantined tools' extraction calls are model calls of the run: in its usage and cost.
    const quarantine = budget.quarantineUsage;
    const quarantined = quarantine.modelCalls > 0;
    const total = quarantined ? addUsage(usage, quarantine) : usage;
    const totalCost = quarantine.cost === undefined ? cost : (cost ?? 0) + quarantine.cost;
    return {
      runId: context.runId,
      conversationId: context.conversationId,
      reason,
      text: lastText,
      steps,
      usage: total,
      ...(totalCost === undefined ? {} : { cost: totalCost }),
      ...(output && reason === 'stop' ? { output: output.value } : {}),
    };
  };

  for (
    let step = context.resume?.step ?? context.startStep ?? 1;
    step <= config.limits.maxSteps;
    step++
  ) {
    if (signal.aborted) return finish('aborted');
    const resumed = context.resume?.step === step ? context.resume : undefined;
    // A resumed step's model call was made (and counted) before the reload.
    if (!resumed) budget.assertCanCallModel();
    const started = performance.now();
    const { response, cost: stepCost } = await modelStep(
      context,
      step,
      resumed,
      requests,
      structured !== undefined,
    );
    lastText = response.text;
    usage = addUsage(usage, response.usage);
    if (stepCost !== undefined) cost = (cost ?? 0) + stepCost;
    if (signal.aborted) return finish('aborted');
    assertComplete(response);

    /** What was wrong with a structured answer that is sent back once. */
    let refusal: string | undefined;
    if (!resumed && response.toolCalls.length === 0) {
      const mayRetry = !outputRetried && step < config.limits.maxSteps;
      const answer = await judgeAnswer(context, step, response, structured, mayRetry);
      lastText = answer.text;
      if (answer.verdict === 'aborted') return finish('aborted');
      if (answer.verdict === 'retry') refusal = answer.issues;
      else if (answer.output) output = answer.output;
    }
    const tools = await toolStep(
      context,
      step,
      resumed?.assistant ?? assistantMessage(response, lastText),
      resumed,
    );
    if (refusal === undefined) {
      await saveStep(context, step, tools, requests.added, response.toolCalls.length === 0);
    } else {
      // The model sees its answer and what was wrong with it; the history keeps neither.
      requests.added.push(...tools.messages, { role: 'user', content: retryRequest(refusal) });
      await context.journal.stepCompleted(step, []);
      outputRetried = true;
    }

    const summary = stepSummary(step, response, tools, lastText, stepCost, started);
    steps.push(summary);
    await emit({
      type: 'step-finish',
      step,
      finishReason: summary.finishReason,
      usage: summary.usage,
      ...(summary.cost === undefined ? {} : { cost: summary.cost }),
      durationMs: summary.durationMs,
    });
    // A call refused for the tool-call budget ends the run, now that its step is saved.
    budget.assertNoToolRefused();
    if (signal.aborted) return finish('aborted');
    if (response.toolCalls.length === 0 && refusal === undefined) return finish('stop');
  }
  return finish('max-steps');
}

/** The result of a run aborted before its loop produced anything. */
export function abortedRun(runId: string, conversationId: string): RunResult {
  return { runId, conversationId, reason: 'aborted', text: '', steps: [], usage: NO_USAGE };
}

/**
 * Adds a step's messages to what the next request sends and writes them to the journal
 * (the step that answers records the run finished in the same write). Tool messages go in
 * even after an abort, so the history never holds a call without its result.
 */
async function saveStep(
  context: RunContext,
  step: number,
  tools: ToolStep,
  added: ChatMessage[],
  final: boolean,
): Promise<void> {
  const { messages, images } = tools;
  added.push(...messages, ...(images ? [images.sent] : []));
  await context.journal.stepCompleted(
    step,
    images ? [...messages, images.stored] : messages,
    images?.attachments ?? [],
    final,
  );
}

/** What the run's result says of a step, timed from `started`. */
function stepSummary(
  step: number,
  response: StepResponse,
  tools: ToolStep,
  text: string,
  cost: number | undefined,
  started: number,
): StepSummary {
  const durationMs = performance.now() - started;
  return {
    step,
    finishReason: response.finishReason,
    text,
    ...(response.reasoning ? { reasoning: response.reasoning } : {}),
    toolCalls: response.toolCalls.map((call, index) => ({
      callId: call.id,
      toolName: call.function.name,
      ok: tools.results[index]?.ok ?? false,
    })),
    usage: response.usage,
    ...(cost === undefined ? {} : { cost }),
    durationMs,
  };
}
