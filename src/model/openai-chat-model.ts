import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { AirlockError } from '../errors/airlock-error';
import type { ModelConfig } from '../protocol/agent-config';
import {
  type ChatMessage,
  MISSING_ATTACHMENT,
  type Usage,
  type UserContentPart,
} from '../protocol/chat';
import { realTimers, type Timers } from '../timing/timers';
import { waitFor } from '../timing/wait';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';
import type { EmbeddingModel } from './embedding-model';
import type { IdleWatchdog } from './idle-watchdog';
import { createLazyResponsesModel } from './lazy-responses-model';
import { httpError, unreachableError } from './model-errors';
import { chatRequestFields, mergeModelOptions } from './model-options';
import { capRetryAfter } from './retry-after';
import { streamedPayloads } from './sse-stream';
import { isContent, streamWithStallRetry } from './stream-attempts';

/** A model configuration that names its endpoint, as the `openai` client needs it. */
export type EndpointConfig = ModelConfig & { readonly baseURL: string };

/** The bearer token sent when the app sets none: the proxy adds the real key. */
const PLACEHOLDER_KEY = 'airlock-proxy';

/** Default of `model.maxRetryAfterMs`: the longest Retry-After waited out before a retry. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 30_000;

/**
 * A `ChatModel` over the official `openai` client. The only module that imports it.
 * The SDK retries 408/409/429/5xx and honours Retry-After; what it does not do once a
 * stream has started is notice silence, so an `IdleWatchdog` guards the gaps.
 */
export function createOpenAIChatModel(
  config: EndpointConfig,
  timers: Timers = realTimers,
): ChatModel {
  const client = createClient(config);
  const fail = (error: unknown) => toAirlockError(error, config);

  /** One request and its stream; says whether content was yielded. */
  async function* attempt(
    request: ModelRequest,
    options: ModelCallOptions,
    signal: AbortSignal,
    watchdog: IdleWatchdog,
    progress: { content: boolean },
  ): AsyncIterable<ModelStreamPart> {
    // The SDK makes the request (retries, errors, headers); the body is parsed here, in one pass.
    const response = await settledUnlessAborted(
      client.chat.completions
        .create(
          {
            ...requestFields(config, request),
            messages: request.messages.map(toMessageParam),
            ...(request.tools.length > 0 ? { tools: request.tools.map(toToolParam) } : {}),
            ...(request.responseFormat
              ? {
                  response_format: {
                    type: 'json_schema' as const,
                    json_schema: {
                      name: request.responseFormat.name,
                      schema: { ...request.responseFormat.schema },
                      strict: request.responseFormat.strict,
                    },
                  },
                }
              : {}),
            stream: true,
            stream_options: { include_usage: true },
          },
          { signal },
        )
        .asResponse(),
      options.signal,
    );
    watchdog.start();
    for await (const chunk of payloadsOf(response, signal)) {
      watchdog.pause();
      for (const part of partsOf(chunk as ChatCompletionChunk)) {
        if (isContent(part)) progress.content = true;
        yield part;
      }
      watchdog.start();
    }
  }

  if (config.api === 'responses') {
    return createLazyResponsesModel(
      config,
      { client, fail, settled: settledUnlessAborted, payloads: payloadsOf },
      timers,
    );
  }

  return {
    name: config.model,
    stream(request: ModelRequest, options: ModelCallOptions): AsyncIterable<ModelStreamPart> {
      return streamWithStallRetry(
        (signal, watchdog, progress) => attempt(request, options, signal, watchdog, progress),
        options,
        timers,
        fail,
      );
    },

    async complete(request: ModelRequest, options: { readonly signal: AbortSignal }) {
      try {
        const completion = await settledUnlessAborted(
          client.chat.completions.create(
            {
              ...requestFields(config, request),
              messages: request.messages.map(toMessageParam),
              stream: false,
            },
            { signal: options.signal },
          ),
          options.signal,
        );
        return {
          text: completion.choices[0]?.message.content ?? '',
          usage: usageOf(completion.usage) ?? {
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

/**
 * The model and the options of a call: the agent's `model.options` under the run's. Spread
 * first, so the fields Airlock sets after them always win.
 */
function requestFields(
  config: ModelConfig,
  request: ModelRequest,
): { model: string } & Record<string, unknown> {
  return {
    ...chatRequestFields(mergeModelOptions(config.options, request.options)),
    model: request.model ?? config.model,
  };
}

/** The client both models use: the endpoint, key, retries and timeout of `config`. */
function createClient(config: EndpointConfig): OpenAI {
  return new OpenAI({
    baseURL: config.baseURL,
    apiKey: config.apiKey ?? PLACEHOLDER_KEY,
    // The key this client holds is a placeholder or a session token; the real one stays on the proxy.
    dangerouslyAllowBrowser: true,
    maxRetries: config.maxRetries ?? 2,
    timeout: config.requestTimeoutMs ?? 60_000,
    // Bound on the SDK's Retry-After sleeps, which nothing else can shorten.
    fetch: capRetryAfter(
      (input, init) => globalThis.fetch(input, init),
      config.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS,
    ),
    ...(config.headers ? { defaultHeaders: { ...config.headers } } : {}),
    // Failures surface as typed errors on the run; the SDK's console logging would only duplicate them.
    logLevel: 'off',
  });
}

/**
 * An `EmbeddingModel` over the `/embeddings` path of the same endpoint (and proxy) as the
 * chat model, retried by the SDK like chat calls. Vectors are asked for as plain floats:
 * every OpenAI-compatible server understands them, not all understand base64.
 */
export function createOpenAIEmbeddingModel(
  config: EndpointConfig,
  embedding: { readonly model: string; readonly dimensions?: number | undefined },
): EmbeddingModel {
  const client = createClient(config);
  return {
    name: embedding.model,
    async embed(texts, options) {
      try {
        const response = await settledUnlessAborted(
          client.embeddings.create(
            {
              model: embedding.model,
              input: [...texts],
              encoding_format: 'float',
              ...(embedding.dimensions === undefined ? {} : { dimensions: embedding.dimensions }),
            },
            { signal: options.signal },
          ),
          options.signal,
        );
        const vectors: number[][] = [];
        for (const item of response.data) vectors[item.index] = item.embedding;
        if (vectors.length !== texts.length || vectors.some((vector) => !Array.isArray(vector)))
          throw new AirlockError(
            'model-http-error',
            `The embeddings endpoint returned ${response.data.length} vectors for ${texts.length} texts.`,
          );
        return vectors;
      } catch (error) {
        if (error instanceof AirlockError) throw error;
        if (options.signal.aborted) throw options.signal.reason ?? error;
        throw toAirlockError(error, config);
      }
    },
  };
}

function* partsOf(chunk: ChatCompletionChunk): Generator<ModelStreamPart> {
  for (const choice of chunk.choices) {
    const { content, tool_calls: toolCalls } = choice.delta;
    const reasoning = reasoningOf(choice.delta);
    if (reasoning) yield { type: 'reasoning-delta', delta: reasoning };
    if (content) yield { type: 'text-delta', delta: content };
    for (const call of toolCalls ?? []) {
      yield {
        type: 'tool-call-delta',
        index: call.index,
        ...(call.id ? { id: call.id } : {}),
        ...(call.function?.name ? { name: call.function.name } : {}),
        argumentsDelta: call.function?.arguments ?? '',
      };
    }
    if (choice.finish_reason === 'function_call')
      yield { type: 'finish', finishReason: 'tool_calls' };
    else if (choice.finish_reason) yield { type: 'finish', finishReason: choice.finish_reason };
  }
  const usage = usageOf(chunk.usage);
  if (usage) yield { type: 'usage', usage };
}

/**
 * A server's usage, when its counts are counts: negative, not finite or missing
 * counts would lower (or break) what budgets add up, so such usage counts as none reported
 * and the loop estimates it.
 */
function usageOf(usage: OpenAI.CompletionUsage | null | undefined): Usage | undefined {
  if (!usage) return undefined;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = usage;
  if (!isCount(prompt) || !isCount(completion)) return undefined;
  return {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: isCount(total) ? total : prompt + completion,
  };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * The thinking OpenAI-compatible servers stream beside the content, under the name each
 * uses: `reasoning_content` (DeepSeek, vLLM) or `reasoning` (Ollama, OpenRouter). Not in
 * the SDK's types, so read as unknown; anything but a string is ignored.
 */
function reasoningOf(delta: object): string | undefined {
  const fields = delta as { reasoning_content?: unknown; reasoning?: unknown };
  if (typeof fields.reasoning_content === 'string') return fields.reasoning_content;
  if (typeof fields.reasoning === 'string') return fields.reasoning;
  return undefined;
}

/** A streamed body's payloads; an `error` payload throws the SDK's `APIError`, as its own stream does. */
function payloadsOf(response: Response, signal: AbortSignal): AsyncIterable<unknown> {
  return streamedPayloads(
    response,
    signal,
    (error, headers) => new APIError(undefined, error, undefined, headers),
  );
}

/**
 * The SDK's wait before a retry does not listen to the signal; an abort must not wait
 * out a Retry-After, so the wait is raced against it.
 */
async function settledUnlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  const waited = await waitFor(promise, { signal });
  if (waited.outcome !== 'settled') throw new APIUserAbortError();
  return waited.value;
}

function toMessageParam(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role === 'assistant') {
    return {
      role: 'assistant',
      content: message.content,
      ...(message.tool_calls?.length
        ? {
            tool_calls: message.tool_calls.map((call) => ({
              id: call.id,
              type: 'function' as const,
              function: { ...call.function },
            })),
          }
        : {}),
    };
  }
  if (message.role === 'user' && typeof message.content !== 'string')
    return { role: 'user', content: message.content.map(toContentPart) };
  return { ...message } as ChatCompletionMessageParam;
}

/**
 * A user message's part as the API takes it. The context resolves stored attachments to
 * data URLs before a request is made; one still unresolved (its bytes were not found) is
 * said to be missing rather than sent without them.
 */
function toContentPart(part: UserContentPart): ChatCompletionContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return 'url' in part
        ? {
            type: 'image_url',
            image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) },
          }
        : { type: 'text', text: MISSING_ATTACHMENT };
    case 'file':
      return 'data' in part
        ? { type: 'file', file: { file_data: part.data, filename: part.filename } }
        : { type: 'text', text: MISSING_ATTACHMENT };
  }
}

function toToolParam(tool: ModelRequest['tools'][number]): ChatCompletionTool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: { ...tool.parameters },
    },
  };
}

function toAirlockError(error: unknown, config: EndpointConfig): AirlockError {
  if (error instanceof AirlockError) return error;
  if (error instanceof APIConnectionError) {
    return unreachableError({
      baseURL: config.baseURL,
      timedOut: error instanceof APIConnectionTimeoutError,
      cause: error,
    });
  }
  if (error instanceof APIError && error.status !== undefined) {
    return httpError(
      {
        status: error.status,
        headers: error.headers instanceof Headers ? error.headers : undefined,
        errorBody: error.error,
        message: error.message,
      },
      {
        baseURL: config.baseURL,
        maxRetryAfterMs: config.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS,
        cause: error,
      },
    );
  }
  if (error instanceof APIError) {
    // An error object sent inside the event stream.
    return new AirlockError(
      'model-http-error',
      `The model stream reported an error: ${error.message}`,
      { cause: error },
    );
  }
  if (error instanceof SyntaxError) {
    return new AirlockError(
      'model-stream-malformed',
      `The model stream sent a chunk that is not JSON: ${error.message}`,
      { cause: error },
    );
  }
  // Reading the body failed after the headers: the connection was cut mid-stream.
  const reason = error instanceof Error ? error.message : String(error);
  return new AirlockError('model-stream-truncated', `The model stream broke off: ${reason}`, {
    cause: error,
  });
}
