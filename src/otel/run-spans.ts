import {
  type Attributes,
  type Context,
  context as contextApi,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { AgentEvent } from '../protocol/events';

/** How runs are traced. Nothing is traced unless the app makes a tracing and hands it over. */
export interface TracingOptions {
  /** Where spans go: e.g. `trace.getTracer('my-app')` of the app's own `TracerProvider`. */
  readonly tracer: Tracer;
  /** Names the agent in the run span (`invoke_agent <name>`, `gen_ai.agent.name`). */
  readonly agentName?: string;
  /**
   * Record content: the final answer on the run span, each step's text on its model-call
   * span, tool arguments and results on tool spans (default false: counts, names, ids and
   * timings only). Content may hold what users typed and what tools returned.
   */
  readonly recordContent?: boolean;
  /** The span the run spans are children of (default: the active context when a run starts). */
  readonly parentContext?: Context;
}

/** Makes, for each run, the function that turns its events into spans. */
export interface RunTracing {
  startRun(): (event: AgentEvent) => void;
}

/**
 * Traces Airlock runs with OpenTelemetry, following the GenAI semantic conventions: a span
 * per run (`invoke_agent`), a child per model call (`chat <model>`) and, under the model
 * call that asked for it, a span per tool call (`execute_tool <tool>`). The spans are
 * made on the page from the run's events, which carry the agent worker's own timings (a
 * model call's and a tool call's duration); they go to the app's exporter through its
 * tracer. Off unless an app passes a tracing to a run's events (`traceRun`) or to
 * `AirlockChatTransport`'s `observer`.
 */
export function createTracing(options: TracingOptions): RunTracing {
  return { startRun: () => spanRecorder(options) };
}

/**
 * Passes a run's events through while tracing them: iterate this instead of the run.
 * Breaking out of the loop ends the spans (and, through the run's iterator, the run).
 */
export async function* traceRun(
  events: AsyncIterable<AgentEvent>,
  tracing: RunTracing,
): AsyncGenerator<AgentEvent, void, undefined> {
  const record = tracing.startRun();
  let ended = false;
  try {
    for await (const event of events) {
      record(event);
      if (event.type === 'run-finish' || event.type === 'run-error') ended = true;
      yield event;
    }
  } finally {
    // A reader that left early: the spans end as the run does, aborted.
    if (!ended) record(endedEarly);
  }
}

/** What ends a trace whose reader left before the run's last event: the run is aborted. */
const endedEarly: AgentEvent = {
  type: 'run-finish',
  runId: '',
  conversationId: '',
  reason: 'aborted',
  text: '',
  steps: [],
  usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
};

/** The GenAI provider Airlock's model client speaks to. */
const PROVIDER = 'openai';

/** The model-call finish reasons, as the conventions spell them. */
function finishReasonName(reason: string | null): string {
  return reason === null ? 'unknown' : reason;
}

/** One run's spans, built as its events arrive. */
function spanRecorder(options: TracingOptions): (event: AgentEvent) => void {
  const { tracer } = options;
  const content = options.recordContent === true;
  const parent = options.parentContext ?? contextApi.active();
  let run: Span | undefined;
  let runContext: Context = parent;
  let model = '';
  /** The model call now open, with when its response ended (the first complete tool call). */
  let call: { span: Span; context: Context; step: number; responseEnd?: number } | undefined;
  let stepText = '';
  /** Calls made and not yet settled: their span is made when the result brings its duration. */
  const tools = new Map<
    string,
    { toolName: string; argumentsText: string; at: number; parent: Context }
  >();
  const toolSpan = (callId: string, start: number) => {
    const tool = tools.get(callId);
    if (!tool) return undefined;
    tools.delete(callId);
    return tracer.startSpan(
      `execute_tool ${tool.toolName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: start,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool.toolName,
          'gen_ai.tool.call.id': callId,
          'gen_ai.tool.type': 'function',
          ...(content ? { 'gen_ai.tool.call.arguments': tool.argumentsText } : {}),
        },
      },
      tool.parent,
    );
  };
  let finished = false;

  const endModelCall = (attributes: Attributes, endTime?: number) => {
    if (!call) return;
    call.span.setAttributes(attributes);
    call.span.end(call.responseEnd ?? endTime);
    call = undefined;
  };

  return (event) => {
    if (finished) return;
    const now = Date.now();
    switch (event.type) {
      case 'run-start': {
        model = event.model;
        const name = options.agentName;
        run = tracer.startSpan(
          name ? `invoke_agent ${name}` : 'invoke_agent',
          {
            kind: SpanKind.INTERNAL,
            startTime: now,
            attributes: {
              'gen_ai.operation.name': 'invoke_agent',
              'gen_ai.provider.name': PROVIDER,
              'gen_ai.request.model': model,
              'airlock.run.id': event.runId,
              ...(name ? { 'gen_ai.agent.name': name } : {}),
            },
          },
          parent,
        );
        runContext = trace.setSpan(parent, run);
        return;
      }
      case 'step-start': {
        const span = tracer.startSpan(
          `chat ${model}`,
          {
            kind: SpanKind.CLIENT,
            startTime: now,
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': PROVIDER,
              'gen_ai.request.model': model,
              'airlock.step': event.step,
            },
          },
          runContext,
        );
        call = { span, context: trace.setSpan(runContext, span), step: event.step };
        stepText = '';
        return;
      }
      case 'text-delta':
        if (content) stepText += event.delta;
        return;
      case 'tool-call':
        // The complete calls arrive once the model's response has ended: the model call ends there.
        if (call && call.responseEnd === undefined) call.responseEnd = now;
        tools.set(event.callId, {
          toolName: event.toolName,
          argumentsText: event.argumentsText,
          at: now,
          parent: call?.context ?? runContext,
        });
        return;
      case 'tool-result': {
        const made = tools.get(event.callId)?.at ?? now;
        // The worker timed the call itself (an approval's wait is not in it).
        const span = toolSpan(event.callId, Math.max(made, now - event.durationMs));
        if (!span) return;
        if (event.flow) {
          // What the flow policy decided and on which labels (no content: levels and names only).
          span.setAttributes({
            'airlock.flow.rule': event.flow.rule,
            'airlock.flow.integrity': event.flow.integrity,
            'airlock.flow.confidentiality': [...event.flow.confidentiality],
            ...(event.flow.destination === undefined
              ? {}
              : { 'airlock.flow.destination': event.flow.destination }),
          });
        }
        if (event.quarantine) {
          // The extraction call is a model call of the run's (its usage is in the run's), under its tool.
          const { usage, cost, durationMs } = event.quarantine;
          tracer
            .startSpan(
              `chat ${model}`,
              {
                kind: SpanKind.CLIENT,
                startTime: Math.max(made, now - durationMs),
                attributes: {
                  'gen_ai.operation.name': 'chat',
                  'gen_ai.provider.name': PROVIDER,
                  'gen_ai.request.model': model,
                  'airlock.quarantine': true,
                  'gen_ai.usage.input_tokens': usage.promptTokens,
                  'gen_ai.usage.output_tokens': usage.completionTokens,
                  ...(cost === undefined ? {} : { 'airlock.cost': cost }),
                  ...(usage.estimated ? { 'airlock.usage.estimated': true } : {}),
                },
              },
              trace.setSpan(runContext, span),
            )
            .end(now);
        }
        if (event.ok) {
          if (content) span.setAttribute('gen_ai.tool.call.result', stringify(event.output));
        } else {
          span.setAttribute('error.type', event.error.code);
          span.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
        }
        span.end(now);
        return;
      }
      case 'step-finish':
        endModelCall(
          {
            'gen_ai.response.finish_reasons': [finishReasonName(event.finishReason)],
            'gen_ai.usage.input_tokens': event.usage.promptTokens,
            'gen_ai.usage.output_tokens': event.usage.completionTokens,
            'airlock.step.duration_ms': event.durationMs,
            ...(event.cost === undefined ? {} : { 'airlock.cost': event.cost }),
            ...(event.usage.estimated ? { 'airlock.usage.estimated': true } : {}),
            ...(content ? { 'airlock.output.text': stepText } : {}),
          },
          now,
        );
        return;
      case 'run-finish': {
        finished = true;
        endOpen(now, 'aborted');
        run?.setAttributes({
          'gen_ai.conversation.id': event.conversationId,
          'gen_ai.usage.input_tokens': event.usage.promptTokens,
          'gen_ai.usage.output_tokens': event.usage.completionTokens,
          'airlock.run.reason': event.reason,
          'airlock.run.steps': event.steps.length,
          ...(event.cost === undefined ? {} : { 'airlock.cost': event.cost }),
          ...(content ? { 'airlock.output.text': event.text } : {}),
        });
        run?.end(now);
        return;
      }
      case 'run-error':
        finished = true;
        endOpen(now, event.error.code);
        run?.setAttribute('error.type', event.error.code);
        run?.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
        run?.end(now);
        return;
      default:
        return;
    }

    /** Ends the model and tool calls a run's end cut short, marked with why. */
    function endOpen(at: number, errorType: string): void {
      for (const [callId, tool] of [...tools]) {
        const span = toolSpan(callId, tool.at);
        span?.setAttribute('error.type', errorType);
        span?.setStatus({ code: SpanStatusCode.ERROR });
        span?.end(at);
      }
      if (call) {
        call.span.setAttribute('error.type', errorType);
        call.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      endModelCall({}, at);
    }
  };
}

/** A tool's output as an attribute value. */
function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
