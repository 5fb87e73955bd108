import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseInputContent,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { AirlockError } from '../errors/airlock-error';
import { isRecord } from '../errors/field-checks';
import type { ModelConfig } from '../protocol/agent-config';
import {
  type ChatMessage,
  type FinishReason,
  MISSING_ATTACHMENT,
  type ReasoningItem,
  type Usage,
  type UserContentPart,
} from '../protocol/chat';
import type { Timers } from '../timing/timers';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';
import type { IdleWatchdog } from './idle-watchdog';
import { mergeModelOptions, responsesRequestFields } from './model-options';
import type { OpenAITransport } from './openai-transport';
import { isContent, streamWithStallRetry } from './stream-attempts';

/**
 * A `ChatModel` over OpenAI's Responses API, used statelessly: `store: false`, so the whole
 * history is sent each time, and reasoning items come back encrypted
 * (`include: ['reasoning.encrypted_content']`) to be kept with their message and sent
 * back in later requests, as the API requires of a model that reasoned before a tool call.
 */
export function createOpenAIResponsesModel(
  config: ModelConfig,
  { client, fail, settled, payloads }: OpenAITransport,
  timers: Timers,
): ChatModel {
  async function* attempt(
    request: ModelRequest,
    options: ModelCallOptions,
    signal: AbortSignal,
    watchdog: Pick<IdleWatchdog, 'start' | 'pause'>,
    progress: { content: boolean },
  ): AsyncIterable<ModelStreamPart> {
    // The SDK makes the request (retries, errors, headers); the body is parsed here, in one pass.
    const response = await settled(
      client.responses
        .create({ ...requestBody(config, request), stream: true }, { signal })
        .asResponse(),
      options.signal,
    );
    const reader = new ResponsesEventReader();
    watchdog.start();
    for await (const event of payloads(response, signal)) {
      watchdog.pause();
      for (const part of reader.read(event)) {
        if (isContent(part)) progress.content = true;
        yield part;
      }
      watchdog.start();
    }
  }

  return {
    name: config.model,
    stream(request, options) {
      return streamWithStallRetry(
        (signal, watchdog, progress) => attempt(request, options, signal, watchdog, progress),
        options,
        timers,
        fail,
      );
    },
    async complete(request, options) {
      try {
        const response = await settled(
          client.responses.create(
            { ...requestBody(config, { ...request, tools: [] }), stream: false },
            { signal: options.signal },
          ),
          options.signal,
        );
        return {
          text: response.output_text ?? '',
          usage: usageOf(response.usage) ?? {
            promptTokens: 0,
            completionTokens: 0,
            totalTokens: 0,
          },
        };
      } catch (error) {
        throw fail(error);
      }
    },
  };
}

/** The request body both calls share (all but `stream`). */
function requestBody(
  config: ModelConfig,
  request: ModelRequest,
): Omit<ResponseCreateParamsStreaming, 'stream'> {
  const format = request.responseFormat;
  const options = responsesRequestFields(mergeModelOptions(config.options, request.options));
  const text = {
    ...(options.verbosity === undefined ? {} : { verbosity: options.verbosity }),
    ...(format
      ? {
          format: {
            type: 'json_schema' as const,
            name: format.name,
            schema: { ...format.schema },
            strict: format.strict,
          },
        }
      : {}),
  };
  return {
    ...options.fields,
    model: request.model ?? config.model,
    input: request.messages.flatMap(toInputItems),
    // Nothing is kept upstream: the history is ours, in IndexedDB.
    store: false,
    include: ['reasoning.encrypted_content'],
    ...(request.tools.length > 0 ? { tools: request.tools.map(toFunctionTool) } : {}),
    ...(options.reasoningEffort === undefined
      ? {}
      : { reasoning: { effort: options.reasoningEffort, summary: 'auto' as const } }),
    ...(Object.keys(text).length > 0 ? { text } : {}),
  };
}

/**
 * A user message's part as the Responses API takes it. Stored attachments are resolved to
 * data URLs before a request is made; one still unresolved (its bytes were not found) is
 * said to be missing rather than sent without them.
 */
function toInputContent(part: UserContentPart): ResponseInputContent {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image':
      return 'url' in part
        ? { type: 'input_image', image_url: part.url, detail: part.detail ?? 'auto' }
        : { type: 'input_text', text: MISSING_ATTACHMENT };
    case 'file':
      return 'data' in part
        ? { type: 'input_file', file_data: part.data, filename: part.filename }
        : { type: 'input_text', text: MISSING_ATTACHMENT };
  }
}

/**
 * One history message as Responses input items. An assistant message becomes its
 * reasoning items (first, as the model produced them), its text, then one `function_call`
 * item per call; a tool message becomes a `function_call_output`.
 */
function toInputItems(message: ChatMessage): ResponseInputItem[] {
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: message.content }];
    case 'user':
      return [
        {
          role: 'user',
          content:
            typeof message.content === 'string'
              ? message.content
              : message.content.map(toInputContent),
        },
      ];
    case 'tool':
      return [
        { type: 'function_call_output', call_id: message.tool_call_id, output: message.content },
      ];
    case 'assistant':
      return [
        ...(message.reasoningItems ?? []).map(
          (item): ResponseInputItem => ({
            type: 'reasoning',
            id: item.id,
            summary: item.summary.map((text) => ({ type: 'summary_text' as const, text })),
            encrypted_content: item.encryptedContent,
          }),
        ),
        ...(message.content ? [{ role: 'assistant' as const, content: message.content }] : []),
        ...(message.tool_calls ?? []).map(
          (call): ResponseInputItem => ({
            type: 'function_call',
            call_id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          }),
        ),
      ];
  }
}

function toFunctionTool(tool: ModelRequest['tools'][number]): FunctionTool {
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: { ...tool.parameters },
    // Tool schemas are not written for strict mode (optional fields); arguments are checked on arrival.
    strict: false,
  };
}

/** A function call being streamed: its place among the response's calls. */
interface StreamedCall {
  readonly index: number;
  /** Whether any of its arguments arrived as deltas (else the done item carries them). */
  streamedArguments: boolean;
}

/**
 * Reads Responses stream events into stream parts. Every event is parsed here, since the
 * server is not trusted: an event that is not an object with a string `type`, or whose
 * fields have the wrong types, fails `model-stream-malformed`; an event type it does not
 * know is skipped (the API adds new ones); arguments for a call that never began are
 * malformed; anything after the response ended is ignored.
 */
export class ResponsesEventReader {
  readonly #calls = new Map<number, StreamedCall>();
  #ended = false;

  *read(event: unknown): Generator<ModelStreamPart> {
    if (!isRecord(event) || typeof event.type !== 'string')
      throw malformed('an event without a string "type"');
    if (this.#ended) return;
    switch (event.type) {
      case 'response.output_text.delta':
        yield { type: 'text-delta', delta: stringField(event, 'delta') };
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        yield { type: 'reasoning-delta', delta: stringField(event, 'delta') };
        return;
      case 'response.reasoning_summary_part.added':
        // Summary parts are paragraphs of one reasoning text.
        if (numberField(event, 'summary_index') > 0)
          yield { type: 'reasoning-delta', delta: '\n\n' };
        return;
      case 'response.output_item.added':
        yield* this.#itemAdded(numberField(event, 'output_index'), event.item);
        return;
      case 'response.function_call_arguments.delta': {
        const outputIndex = numberField(event, 'output_index');
        const call = this.#calls.get(outputIndex);
        if (!call)
          throw malformed(`arguments for output item ${outputIndex} before the item began`);
        const delta = stringField(event, 'delta');
        if (delta) call.streamedArguments = true;
        yield { type: 'tool-call-delta', index: call.index, argumentsDelta: delta };
        return;
      }
      case 'response.output_item.done':
        yield* this.#itemDone(numberField(event, 'output_index'), event.item);
        return;
      case 'response.completed':
      case 'response.incomplete': {
        this.#ended = true;
        const response = isRecord(event.response) ? event.response : {};
        const usage = usageOf(response.usage);
        yield { type: 'finish', finishReason: this.#finishReason(event.type, response) };
        if (usage) yield { type: 'usage', usage };
        return;
      }
      case 'response.failed': {
        const response = isRecord(event.response) ? event.response : {};
        const error = isRecord(response.error) ? response.error : {};
        throw new AirlockError(
          'model-http-error',
          `The model response failed: ${typeof error.message === 'string' ? error.message : 'no reason given'}.`,
          { details: { code: typeof error.code === 'string' ? error.code : null } },
        );
      }
      case 'error':
        throw new AirlockError(
          'model-http-error',
          `The model stream reported an error: ${typeof event.message === 'string' ? event.message : 'no message'}.`,
          { details: { code: typeof event.code === 'string' ? event.code : null } },
        );
      default:
        return;
    }
  }

  *#itemAdded(outputIndex: number, item: unknown): Generator<ModelStreamPart> {
    if (!isRecord(item) || item.type !== 'function_call') return;
    if (this.#calls.has(outputIndex)) throw malformed(`output item ${outputIndex} began twice`);
    yield* this.#begin(outputIndex, item);
  }

  *#itemDone(outputIndex: number, item: unknown): Generator<ModelStreamPart> {
    if (!isRecord(item)) throw malformed(`output item ${outputIndex} done without an item`);
    if (item.type === 'reasoning') {
      const reasoning = reasoningItemOf(item);
      if (reasoning) yield { type: 'reasoning-item', item: reasoning };
      return;
    }
    if (item.type !== 'function_call') return;
    // A server that skips `added` or the deltas still sends the whole call here.
    const call = this.#calls.get(outputIndex);
    if (!call) {
      yield* this.#begin(outputIndex, item);
      return;
    }
    const args = item.arguments;
    if (!call.streamedArguments && typeof args === 'string' && args) {
      call.streamedArguments = true;
      yield { type: 'tool-call-delta', index: call.index, argumentsDelta: args };
    }
  }

  *#begin(outputIndex: number, item: Record<string, unknown>): Generator<ModelStreamPart> {
    const call: StreamedCall = { index: this.#calls.size, streamedArguments: false };
    this.#calls.set(outputIndex, call);
    const args = typeof item.arguments === 'string' ? item.arguments : '';
    if (args) call.streamedArguments = true;
    yield {
      type: 'tool-call-delta',
      index: call.index,
      id: stringField(item, 'call_id'),
      name: stringField(item, 'name'),
      argumentsDelta: args,
    };
  }

  #finishReason(
    type: 'response.completed' | 'response.incomplete',
    response: Record<string, unknown>,
  ): Exclude<FinishReason, null> {
    if (type === 'response.incomplete') {
      const details = isRecord(response.incomplete_details) ? response.incomplete_details : {};
      return details.reason === 'content_filter' ? 'content_filter' : 'length';
    }
    return this.#calls.size > 0 ? 'tool_calls' : 'stop';
  }
}

/** A reasoning output item worth keeping: one the server can decrypt when it is sent back. */
function reasoningItemOf(item: Record<string, unknown>): ReasoningItem | undefined {
  if (typeof item.id !== 'string' || !item.id) return undefined;
  if (typeof item.encrypted_content !== 'string' || !item.encrypted_content) return undefined;
  const summary = Array.isArray(item.summary)
    ? item.summary.flatMap((part) =>
        isRecord(part) && typeof part.text === 'string' ? [part.text] : [],
      )
    : [];
  return { id: item.id, summary, encryptedContent: item.encrypted_content };
}

function usageOf(usage: unknown): Usage | undefined {
  if (!isRecord(usage)) return undefined;
  const { input_tokens: input, output_tokens: output, total_tokens: total } = usage;
  if (!isCount(input) || !isCount(output)) return undefined;
  return {
    promptTokens: input,
    completionTokens: output,
    totalTokens: isCount(total) ? total : input + output,
  };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function stringField(event: Record<string, unknown>, name: string): string {
  const value = event[name];
  if (typeof value !== 'string')
    throw malformed(`"${name}" of a ${String(event.type)} is not a string`);
  return value;
}

function numberField(event: Record<string, unknown>, name: string): number {
  const value = event[name];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw malformed(`"${name}" of a ${String(event.type)} is not an index`);
  return value;
}

function malformed(what: string): AirlockError {
  return new AirlockError('model-stream-malformed', `The Responses stream sent ${what}.`);
}
