import { AirlockError } from '../../errors/airlock-error';
import type { AttachmentData } from '../../memory/store';
import type { ChatModel, ModelRequest } from '../../model/chat-model';
import type { TokenCalibration } from '../../model/estimate-tokens';
import type { ResponseFormat } from '../../model/structured-output';
import type { RunUsage } from '../../protocol/budgets';
import type { ChatMessage, ChatToolCall, FinishReason, Usage } from '../../protocol/chat';
import type { AgentEvent, RunResult, StepSummary } from '../../protocol/events';
import type { AgentConfig, OutputRequest } from '../../protocol/wire';
import { waitFor } from '../../timing/wait';
import type { BudgetMeter } from '../policy/budget-meter';
import { GUARDRAIL_ABORTED, type GuardrailGate, guardrailBlocked } from '../policy/guardrail-gate';
import { runToolCalls, type ToolCallResult, type ToolCallsContext } from '../tools/run-tool-calls';
import { formatToolOutput, isErrorOutput } from '../tools/tool-message';
import { confirmedFirstCall } from './confirmed-call';
import type { OutputVerdict } from './event-sink';
import { addUsage, NO_USAGE, type StepResponse, streamStep } from './stream-step';

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/** A step whose tool calls were cut short (by a reload while waiting for approval), to finish first. */
export interface ResumedStep {
  readonly step: number;
  readonly assistant: AssistantMessage;
  /** Tool messages of calls already settled; the other calls run again (and ask again). */
  readonly settled: readonly ToolMessage[];
  /** Calls that began executing before the reload; those not settled are never run again. */
  readonly started: readonly string[];
}

/**
 * Where a run writes down what it did, so it survives the page. Each call is awaited
 * before the run goes on; none is made while a model or tool call is open.
 */
export interface RunJournal {
  /**
   * A completed step's messages (assistant, then its tool results in call order, then the
   * images its tools returned), with the attachments those refer to. `final` marks the
   * step that answers (no tool calls): the run is recorded finished with it, in the same
   * write.
   */
  stepCompleted(
    step: number,
    messages: readonly ChatMessage[],
    attachments?: readonly AttachmentData[],
    final?: boolean,
  ): Promise<void>;
  /**
   * The step's tools run: the step's response and each call as it starts and settles, so a
   * resume after a reload finishes the step without running a settled or started call again.
   */
  toolsRunning(pending: ResumedStep): Promise<void>;
  /** The step's calls wait for the user: what is needed to finish the step after a reload. */
  awaitingApproval(
    pending: ResumedStep & { readonly awaiting: readonly ChatToolCall[] },
  ): Promise<void>;
  /** What the run consumed so far; saved with the next write. */
  usageChanged(usage: RunUsage): void;
}

/** Everything one run needs; the run owns nothing it is handed. */
export interface RunContext {
  readonly runId: string;
  readonly conversationId: string;
  readonly config: AgentConfig;
  readonly model: ChatModel;
  /** The agent's token calibration, taught by each step's reported usage. */
  readonly tokens?: TokenCalibration;
  /** The run's model name and request fields, when it asked for its own. */
  readonly call?: Pick<ModelRequest, 'model' | 'options'>;
  /** The agent's tools and the run's allowlist, approvals and audit log. */
  readonly tools: Pick<ToolCallsContext, 'registry' | 'allowed' | 'approvals' | 'audit'>;
  /** The system message: the app's instructions and Airlock's fixed notices, nothing else. */
  readonly system: readonly ChatMessage[];
  /**
   * What is sent before this run's own messages: the data messages (memories, summary,
   * knowledge), the history window and the new input, last.
   */
  readonly history: readonly ChatMessage[];
  /**
   * Set when `system` and `history` were built from rows kept in the worker: settles once
   * the input's write has checked them, with the context to send instead when they were
   * out of date. The first request goes out at once; nothing of it is used before then.
   */
  readonly confirm?: Promise<Pick<RunContext, 'system' | 'history'> | undefined>;
  readonly journal: RunJournal;
  /** Counts what the run spends against its budgets and its conversation's. */
  readonly budget: BudgetMeter;
  /** The page's output and tool-argument guardrails. */
  readonly guardrails: GuardrailGate;
  /** Finish this step before streaming a new one. */
  readonly resume?: ResumedStep;
  /** The step an interrupted run goes on from (its earlier steps are in `history`); default 1. */
  readonly startStep?: number;
  /** The final answer must be JSON fitting this schema, as the page's `check` decides. */
  readonly output?: RunOutput;
  readonly signal: AbortSignal;
  readonly emit: (event: AgentEvent) => Promise<void>;
}

/** A run's structured output: the schema the model is given, and the page's check. */
export interface RunOutput extends OutputRequest {
  /** The page's verdict on a parsed answer; undefined when the run ended first. */
  readonly check: (value: unknown) => Promise<OutputVerdict | undefined>;
}

/**
 * The ReAct loop: stream a response, run the tools it asks for, feed their results
 * back, until a final answer, `maxSteps`, a budget, or abort. Every completed step goes
 * to the journal before the next model call. Throws `AirlockError` on failure; a response
 * that did not finish properly never has its tools run.
 */
export async function runAgent(context: RunContext): Promise<RunResult> {
  const { config, signal, emit, budget } = context;
  const tools = context.tools.registry.specs(context.tools.allowed);
  const added: ChatMessage[] = [];
  const steps: StepSummary[] = [];
  let usage: Usage = NO_USAGE;
  let cost: number | undefined;
  let lastText = '';
  /** The validated structured answer, once there is one. */
  let output: { readonly value: unknown } | undefined;
  /** A structured answer that did not fit was sent back; the next one that does not fails the run. */
  let outputRetried = false;
  const structured = context.output ? await structuredRequest(config, context.output) : undefined;
  const systemOf = (given: readonly ChatMessage[]) =>
    structured?.notice ? withNotice(given, structured.notice) : given;
  let system = systemOf(context.system);
  let { history } = context;
  // Ids the model sees in this request's history: a new call never takes one of them.
  const callIds = new Set<string>();
  const seeCallIds = (messages: readonly ChatMessage[]) => {
    for (const message of messages)
      if (message.role === 'assistant')
        for (const call of message.tool_calls ?? []) callIds.add(call.id);
  };
  seeCallIds([...history, ...(context.resume ? [context.resume.assistant] : [])]);
  const requestOf = (): ModelRequest => ({
    messages: [...system, ...history, ...added],
    tools,
    ...(structured?.responseFormat ? { responseFormat: structured.responseFormat } : {}),
    ...context.call,
  });
  // The first request is sent before its context is confirmed, and sent again if it was stale.
  const model = context.confirm
    ? confirmedFirstCall(
        context.model,
        context.confirm.then((fresh) => {
          if (!fresh) return undefined;
          system = systemOf(fresh.system);
          history = fresh.history;
          seeCallIds(history);
          return requestOf();
        }),
      )
    : context.model;
  const finish = (reason: RunResult['reason']): RunResult => ({
    runId: context.runId,
    conversationId: context.conversationId,
    reason,
    text: lastText,
    steps,
    usage,
    ...(cost === undefined ? {} : { cost }),
    ...(output && reason === 'stop' ? { output: output.value } : {}),
  });

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
    await emit({ type: 'step-start', step });
    const response = resumed
      ? resumedResponse(resumed.assistant)
      : await streamStep({
          step,
          model,
          request: requestOf(),
          signal,
          idleTimeoutMs: config.limits.streamIdleTimeoutMs,
          emit,
          callIds,
          partialOutput: structured !== undefined,
          ...(context.tokens ? { tokens: context.tokens } : {}),
        });
    lastText = response.text;
    usage = addUsage(usage, response.usage);
    const stepCost = resumed ? undefined : budget.recordModelCall(response.usage);
    if (stepCost !== undefined) cost = (cost ?? 0) + stepCost;
    context.journal.usageChanged(budget.usage);
    if (signal.aborted) return finish('aborted');
    assertComplete(response);

    /** What was wrong with a structured answer that is sent back once. */
    let refusal: string | undefined;
    if (!resumed && response.toolCalls.length === 0) {
      const answer = await guardAnswer(context, step, response.text);
      if (answer.action !== 'allow') {
        // Nothing of the answer is kept (not even as interrupted text); the step's usage is.
        await context.journal.stepCompleted(step, []);
        lastText = '';
        if (answer.action === 'aborted') return finish('aborted');
        throw guardrailBlocked('output', answer);
      }
      lastText = answer.text;
      if (structured) {
        const verdict = await checkAnswer(structured, lastText, signal);
        if (verdict === undefined) {
          await context.journal.stepCompleted(step, []);
          return finish('aborted');
        }
        if ('issues' in verdict) {
          if (outputRetried || step >= config.limits.maxSteps) {
            // The answer is kept in the history as the model wrote it; the run fails.
            await context.journal.stepCompleted(step, [
              { role: 'assistant', content: lastText, ...reasoningOf(response) },
            ]);
            throw outputInvalid(lastText, verdict.issues);
          }
          refusal = verdict.issues;
        } else {
          output = verdict;
        }
      }
    }
    const assistant: AssistantMessage = resumed?.assistant ?? {
      role: 'assistant',
      content: lastText || null,
      ...(response.toolCalls.length > 0 ? { tool_calls: response.toolCalls } : {}),
      ...reasoningOf(response),
    };
    const toolMessages = await runStepTools(context, step, assistant, resumed);
    const stepMessages = [assistant, ...toolMessages.map((result) => result.message)];
    // Loaded with the first tool that returns images: most tools return text.
    const images = toolMessages.some((result) => result.images?.length)
      ? await (await import('../context/tool-images')).toolImagesMessage(
          toolMessages.map((result) => ({
            callId: result.message.tool_call_id,
            ...(result.images ? { images: result.images } : {}),
          })),
        )
      : undefined;
    if (refusal === undefined) {
      // Tool messages go in even after an abort, so the history never holds a call without its result.
      added.push(...stepMessages, ...(images ? [images.sent] : []));
      await context.journal.stepCompleted(
        step,
        images ? [...stepMessages, images.stored] : stepMessages,
        images?.attachments ?? [],
        response.toolCalls.length === 0,
      );
    } else {
      // The model sees its answer and what was wrong with it; the history keeps neither.
      added.push(assistant, { role: 'user', content: retryRequest(refusal) });
      await context.journal.stepCompleted(step, []);
      outputRetried = true;
    }

    const durationMs = performance.now() - started;
    const toolCalls = response.toolCalls.map((call, index) => ({
      callId: call.id,
      toolName: call.function.name,
      ok: toolMessages[index]?.ok ?? false,
    }));
    const priced = stepCost === undefined ? {} : { cost: stepCost };
    steps.push({
      step,
      finishReason: response.finishReason,
      text: lastText,
      ...(response.reasoning ? { reasoning: response.reasoning } : {}),
      toolCalls,
      usage: response.usage,
      ...priced,
      durationMs,
    });
    await emit({
      type: 'step-finish',
      step,
      finishReason: response.finishReason,
      usage: response.usage,
      ...priced,
      durationMs,
    });
    // A call refused for the tool-call budget ends the run, now that its step is saved.
    budget.assertNoToolRefused();
    if (signal.aborted) return finish('aborted');
    if (response.toolCalls.length === 0 && refusal === undefined) return finish('stop');
  }
  return finish('max-steps');
}

/** How a run asks for its structured output, reads it, and has the page check it. */
interface StructuredRequest {
  readonly responseFormat?: ResponseFormat;
  readonly notice?: string;
  readonly readJsonAnswer: (text: string) => ReturnType<JsonReader['readJsonAnswer']>;
  readonly check: RunOutput['check'];
}

type JsonReader = typeof import('../../model/structured-output');

/**
 * How the run asks for its structured output: as `response_format`, or (`prompted`, the
 * default with prompted tool calling) as a notice in the system message. The JSON repair
 * it needs is loaded here, so agents that never ask for structured output never load it.
 */
async function structuredRequest(
  config: AgentConfig,
  output: RunOutput,
): Promise<StructuredRequest> {
  const reader = await import('../../model/structured-output');
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

/** The system message with `notice` added (or a system message of it alone). */
function withNotice(system: readonly ChatMessage[], notice: string): ChatMessage[] {
  const [first] = system;
  return first?.role === 'system'
    ? [{ role: 'system', content: `${first.content}\n\n${notice}` }]
    : [{ role: 'system', content: notice }];
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

/** What the model is told when its structured answer does not fit. */
function retryRequest(issues: string): string {
  return (
    `Your answer does not fit the required JSON Schema: ${issues}\n` +
    'Answer again with the corrected JSON value only.'
  );
}

/** The error of a run whose structured answer still did not fit after one retry. */
function outputInvalid(text: string, issues: string): AirlockError {
  return new AirlockError(
    'output-invalid',
    `The final answer does not fit the output schema: ${issues}`,
    { details: { text, issues } },
  );
}

/** The result of a run aborted before its loop produced anything. */
export function abortedRun(runId: string, conversationId: string): RunResult {
  return { runId, conversationId, reason: 'aborted', text: '', steps: [], usage: NO_USAGE };
}

/**
 * Runs a step's tool calls (those not settled before a resume), keeping the journal told:
 * every call that starts executing is written into the step's checkpoint before it runs,
 * and every call that settles after, so a resume never runs a call a second time. Once a
 * call waits for approval the checkpoint says so (the run waits for approval).
 */
async function runStepTools(
  context: RunContext,
  step: number,
  assistant: AssistantMessage,
  resumed: ResumedStep | undefined,
): Promise<ToolCallResult[]> {
  const calls = assistant.tool_calls ?? [];
  if (calls.length === 0) return [];
  const settled = [...(resumed?.settled ?? [])];
  const started = new Set(resumed?.started ?? []);
  // A call that started before the reload and left no result may have done its work.
  for (const call of calls) {
    if (!started.has(call.id) || settled.some((message) => message.tool_call_id === call.id))
      continue;
    settled.push(await interruptedCall(context, step, call));
  }
  const already = new Map(settled.map((message) => [message.tool_call_id, message]));
  const toRun = calls.filter((call) => !already.has(call.id));
  const awaiting = new Map<string, ChatToolCall>();
  /** A call of the step asked for approval: checkpoints say the run waits for it. */
  let asked = false;
  const checkpoint = () =>
    asked
      ? context.journal.awaitingApproval({
          step,
          assistant,
          settled,
          started: [...started],
          awaiting: [...awaiting.values()],
        })
      : context.journal.toolsRunning({ step, assistant, settled, started: [...started] });
  const { guardrails, signal } = context;
  const guardContext = { runId: context.runId, conversationId: context.conversationId };
  const results = await runToolCalls(toRun, {
    ...context.tools,
    runId: context.runId,
    conversationId: context.conversationId,
    step,
    signal,
    emit: context.emit,
    ...(guardrails.guards('toolArguments')
      ? { guardArguments: (request) => guardrails.toolArguments(request, guardContext, signal) }
      : {}),
    startExecution: () => {
      const allowed = context.budget.tryStartToolCall();
      if (allowed) context.journal.usageChanged(context.budget.usage);
      return allowed;
    },
    beforeExecute: async (request) => {
      started.add(request.callId);
      await checkpoint();
    },
    onSettled: async (message) => {
      settled.push(message);
      awaiting.delete(message.tool_call_id);
      if (!asked || awaiting.size > 0) await checkpoint();
    },
    onAwaitingApproval: async (call) => {
      awaiting.set(call.id, call);
      asked = true;
      await checkpoint();
    },
  });
  const fresh = new Map(toRun.map((call, index) => [call.id, results[index]]));
  // In call order, the order the model expects, whichever ran before a reload.
  return calls.map((call) => {
    const before = already.get(call.id);
    if (before) return { message: before, ok: !isErrorOutput(before.content) };
    const result = fresh.get(call.id);
    if (!result)
      throw new AirlockError('internal-error', `Tool call ${call.id} produced no result.`);
    return result;
  });
}

/** The tool message (and event) of a call a reload cut short while it ran. */
async function interruptedCall(
  context: RunContext,
  step: number,
  call: ChatToolCall,
): Promise<ToolMessage> {
  const error = {
    code: 'tool-interrupted',
    message: `The page was closed while "${call.function.name}" ran, before its result was stored. It may have done its work; it was not run again.`,
  } as const;
  await context.emit({
    type: 'tool-result',
    step,
    callId: call.id,
    toolName: call.function.name,
    durationMs: 0,
    ok: false,
    error,
  });
  context.tools.audit({
    runId: context.runId,
    callId: call.id,
    toolName: call.function.name,
    arguments: call.function.arguments,
    outcome: error.code,
    durationMs: 0,
    at: Date.now(),
  });
  return {
    role: 'tool',
    tool_call_id: call.id,
    content: formatToolOutput(call.function.name, call.id, { ok: false, error }),
  };
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

/** The reasoning a step's assistant message keeps: its text to show, its items to send back. */
function reasoningOf(
  response: StepResponse,
): Pick<AssistantMessage, 'reasoning' | 'reasoningItems'> {
  return {
    ...(response.reasoning ? { reasoning: response.reasoning } : {}),
    ...(response.reasoningItems.length > 0 ? { reasoningItems: response.reasoningItems } : {}),
  };
}

/** A resumed step's response, as it was streamed before the reload. */
function resumedResponse(assistant: AssistantMessage): StepResponse {
  return {
    text: assistant.content ?? '',
    reasoning: assistant.reasoning ?? '',
    reasoningItems: assistant.reasoningItems ?? [],
    toolCalls: assistant.tool_calls ?? [],
    finishReason: 'tool_calls' satisfies FinishReason,
    usage: NO_USAGE,
  };
}

/**
 * Only a response the model finished may act. Some OpenAI-compatible servers end a
 * tool-calling response with `stop`, so tool calls are judged by their presence.
 */
function assertComplete(response: StepResponse): void {
  switch (response.finishReason) {
    case 'stop':
    case 'tool_calls':
      return;
    case null:
      throw new AirlockError(
        'model-stream-truncated',
        'The model stream ended without a finish reason; the response is incomplete and its tool calls were not run.',
        {
          details: {
            receivedChars: response.text.length,
            pendingToolCalls: response.toolCalls.length,
          },
        },
      );
    case 'length':
      throw new AirlockError(
        'model-output-truncated',
        'The model hit its output token limit (finish_reason "length"); its tool calls were not run.',
        { details: { pendingToolCalls: response.toolCalls.length } },
      );
    case 'content_filter':
      throw new AirlockError(
        'model-content-filtered',
        'The model output was withheld by a content filter.',
      );
  }
}
