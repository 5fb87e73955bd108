/**
 * Builds Responses API wire objects from a scripted reply: the same script the Chat
 * Completions chunks are built from, spoken as the Responses stream events, in the order
 * the real API sends them. Pure functions: ids and timestamps come in through the context.
 */

import type { CompletionUsage } from 'openai/resources/completions';
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStreamEvent,
  ResponseUsage,
} from 'openai/resources/responses/responses';
import {
  type CompletionContext,
  resolveFinishReason,
  resolveToolCalls,
  splitArguments,
  splitWords,
} from './chunks.js';
import type { ScriptedReply } from './script.js';

/** What a request asked for that shapes the answer. */
export interface ResponsesRequestShape {
  /** `include` listed `reasoning.encrypted_content`: reasoning items carry it. */
  readonly includeEncryptedReasoning: boolean;
}

/** The opaque text a scripted reasoning item carries, and a request sends back: `enc:` + base64. */
export function encryptedReasoning(text: string): string {
  return `enc:${Buffer.from(text, 'utf8').toString('base64')}`;
}

/** Events without `sequence_number`, which is added in order at the end. */
type UnnumberedEvent = ResponseStreamEvent extends infer Event
  ? Event extends ResponseStreamEvent
    ? Omit<Event, 'sequence_number'>
    : never
  : never;

/**
 * Every stream event of a reply, in wire order: `response.created`, `response.in_progress`;
 * the reasoning item (its summary part streamed word by word); the message item (its text
 * streamed word by word); each function call item (its arguments split across deltas); then
 * `response.completed` (`response.incomplete` for a `length` finish) with the usage. A
 * reply whose finish reason is `null` ends after its items, without a terminal event.
 */
export function buildResponsesEvents(
  reply: ScriptedReply,
  context: CompletionContext,
  options: ResponsesRequestShape & { usage: CompletionUsage | null },
): ResponseStreamEvent[] {
  const events: UnnumberedEvent[] = [];
  const output: ResponseOutputItem[] = [];
  events.push({ type: 'response.created', response: responseObject(context, 'in_progress', []) });
  events.push({
    type: 'response.in_progress',
    response: responseObject(context, 'in_progress', []),
  });

  if (reply.reasoning) {
    const outputIndex = output.length;
    const item: ResponseReasoningItem = { id: `rs_${context.id}`, type: 'reasoning', summary: [] };
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item });
    const part = { type: 'summary_text' as const, text: '' };
    const itemId = item.id;
    events.push({
      type: 'response.reasoning_summary_part.added',
      item_id: itemId,
      output_index: outputIndex,
      summary_index: 0,
      part,
    });
    for (const word of splitWords(reply.reasoning)) {
      events.push({
        type: 'response.reasoning_summary_text.delta',
        item_id: itemId,
        output_index: outputIndex,
        summary_index: 0,
        delta: word,
        obfuscation: '',
      } as UnnumberedEvent);
    }
    events.push({
      type: 'response.reasoning_summary_text.done',
      item_id: itemId,
      output_index: outputIndex,
      summary_index: 0,
      text: reply.reasoning,
    });
    events.push({
      type: 'response.reasoning_summary_part.done',
      item_id: itemId,
      output_index: outputIndex,
      summary_index: 0,
      part: { ...part, text: reply.reasoning },
    });
    const done: ResponseReasoningItem = {
      ...item,
      summary: [{ type: 'summary_text', text: reply.reasoning }],
      ...(options.includeEncryptedReasoning
        ? { encrypted_content: encryptedReasoning(reply.reasoning) }
        : {}),
    };
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item: done });
    output.push(done);
  }

  if (reply.text) {
    const outputIndex = output.length;
    const item: ResponseOutputMessage = {
      id: `msg_${context.id}`,
      type: 'message',
      status: 'in_progress',
      role: 'assistant',
      content: [],
    };
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item });
    const where = { item_id: item.id, output_index: outputIndex, content_index: 0 };
    const emptyPart = { type: 'output_text' as const, text: '', annotations: [] };
    events.push({ type: 'response.content_part.added', ...where, part: emptyPart });
    for (const word of splitWords(reply.text)) {
      events.push({ type: 'response.output_text.delta', ...where, delta: word, logprobs: [] });
    }
    events.push({ type: 'response.output_text.done', ...where, text: reply.text, logprobs: [] });
    const part = { ...emptyPart, text: reply.text };
    events.push({ type: 'response.content_part.done', ...where, part });
    const done: ResponseOutputMessage = { ...item, status: 'completed', content: [part] };
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item: done });
    output.push(done);
  }

  resolveToolCalls(reply, context.turnIndex).forEach((call, index) => {
    const outputIndex = output.length;
    const item: ResponseFunctionToolCall = {
      id: `fc_${context.id}_${index}`,
      type: 'function_call',
      status: 'in_progress',
      call_id: call.id,
      name: call.name,
      arguments: '',
    };
    events.push({ type: 'response.output_item.added', output_index: outputIndex, item });
    for (const piece of splitArguments(call.arguments, reply.argumentChunks ?? 3)) {
      events.push({
        type: 'response.function_call_arguments.delta',
        item_id: item.id as string,
        output_index: outputIndex,
        delta: piece,
      });
    }
    events.push({
      type: 'response.function_call_arguments.done',
      item_id: item.id as string,
      output_index: outputIndex,
      name: call.name,
      arguments: call.arguments,
    });
    const done: ResponseFunctionToolCall = {
      ...item,
      status: 'completed',
      arguments: call.arguments,
    };
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item: done });
    output.push(done);
  });

  const finishReason = resolveFinishReason(reply);
  if (finishReason === 'length') {
    events.push({
      type: 'response.incomplete',
      response: {
        ...responseObject(context, 'incomplete', output, options.usage, reply.reasoning),
        incomplete_details: { reason: 'max_output_tokens' },
      },
    });
  } else if (finishReason !== null) {
    events.push({
      type: 'response.completed',
      response: responseObject(context, 'completed', output, options.usage, reply.reasoning),
    });
  }
  return events.map(
    (event, index) => ({ ...event, sequence_number: index }) as ResponseStreamEvent,
  );
}

/** The non-streamed `response` object for a reply: what `response.completed` carries. */
export function buildResponse(
  reply: ScriptedReply,
  context: CompletionContext,
  options: ResponsesRequestShape & { usage: CompletionUsage | null },
): Response {
  const events = buildResponsesEvents(
    { ...reply, finishReason: resolveFinishReason(reply) ?? 'stop' },
    context,
    options,
  );
  const last = events.at(-1);
  if (last?.type === 'response.completed' || last?.type === 'response.incomplete')
    return last.response;
  return responseObject(context, 'completed', [], options.usage);
}

function responseObject(
  context: CompletionContext,
  status: 'in_progress' | 'completed' | 'incomplete',
  output: ResponseOutputItem[],
  usage?: CompletionUsage | null,
  reasoning?: string,
): Response {
  const text = output
    .flatMap((item) => (item.type === 'message' ? item.content : []))
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');
  return {
    id: `resp_${context.id}`,
    object: 'response',
    created_at: context.created,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    model: context.model,
    output,
    output_text: text,
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    store: false,
    ...(usage ? { usage: responseUsage(usage, reasoning) } : {}),
  } as Response;
}

function responseUsage(usage: CompletionUsage, reasoning = ''): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: Math.ceil(reasoning.length / 4) },
    total_tokens: usage.total_tokens,
  };
}

/**
 * Where a scripted fault's `afterChunks` falls in a Responses stream, so one script means
 * the same in both protocols: the events a Chat Completions chunk corresponds to are
 * counted (`response.created` for the role chunk, every delta, each function call's start,
 * the terminal event for the finish chunk), and the fault comes just before the counted
 * event numbered `afterChunks` (from 0), the events between counted ones written with the
 * one before. Returns an index into `events` (its length: after the last).
 */
export function responsesFaultIndex(
  events: readonly ResponseStreamEvent[],
  afterChunks: number,
): number {
  let counted = 0;
  for (const [index, event] of events.entries()) {
    if (!corresponds(event)) continue;
    if (counted === afterChunks) return index;
    counted++;
  }
  return events.length;
}

function corresponds(event: ResponseStreamEvent): boolean {
  if (event.type.endsWith('.delta')) return true;
  if (event.type === 'response.output_item.added') return event.item.type === 'function_call';
  return (
    event.type === 'response.created' ||
    event.type === 'response.completed' ||
    event.type === 'response.incomplete'
  );
}
