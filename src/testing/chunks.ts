/**
 * Builds Chat Completions wire objects from a scripted reply. Pure functions:
 * ids and timestamps come in through {@link CompletionContext} so the output
 * is deterministic for a given input.
 */
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessageFunctionToolCall,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ScriptedReply, ScriptedToolCall } from './script.js';

/** The model id listed by `GET /models` and used when a request names none. */
export const TEST_MODEL_ID = 'airlock-test-model';

/** Sent on every completion; real responses carry one too, and clients may log it. */
const SYSTEM_FINGERPRINT = 'fp_airlock';

/** Identity shared by every chunk of one response. */
export interface CompletionContext {
  /** `chatcmpl-…` */
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
  /** Which turn this reply answers; used for default tool call ids. */
  turnIndex: number;
}

/** OpenAI's error body: `{ error: { message, type, param, code } }`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** A tool call with its defaults applied and its arguments serialised. */
export interface ResolvedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Splits text into word deltas, each keeping its leading whitespace ("Hello", " world"); joins back to `text`. */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

/** Splits `text` into at most `pieces` non-empty, roughly equal parts; joins back to `text`. */
export function splitArguments(text: string, pieces: number): string[] {
  const size = Math.ceil(text.length / Math.max(1, Math.floor(pieces)));
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) {
    parts.push(text.slice(start, start + size));
  }
  return parts;
}

/** Applies a reply's tool call defaults: ids `call_<turn>_<i>` and stringified object arguments. */
export function resolveToolCalls(reply: ScriptedReply, turnIndex: number): ResolvedToolCall[] {
  return (reply.toolCalls ?? []).map((call: ScriptedToolCall, index) => ({
    id: call.id ?? `call_${turnIndex}_${index}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
}

/** The finish reason a reply ends with; `null` means the stream carries none. */
export function resolveFinishReason(reply: ScriptedReply): 'stop' | 'tool_calls' | 'length' | null {
  if (reply.finishReason !== undefined) return reply.finishReason;
  return (reply.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop';
}

/** The reply's usage, or rough counts (characters / 4) of the request messages and the reply. */
export function resolveUsage(reply: ScriptedReply, requestBody: unknown): CompletionUsage {
  const scripted = reply.usage;
  const promptTokens =
    scripted?.prompt_tokens ?? roughTokens(JSON.stringify(messagesOf(requestBody)) ?? '');
  const completionTokens =
    scripted?.completion_tokens ??
    roughTokens(
      (reply.reasoning ?? '') +
        (reply.text ?? '') +
        resolveToolCalls(reply, 0)
          .map((call) => call.name + call.arguments)
          .join(''),
    );
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

/**
 * Every stream chunk of a reply, in wire order: role, content deltas, tool
 * calls (all of call 0, then call 1, …), finish, and, when the client asked
 * for it, the usage chunk. `[DONE]` is the transport's job.
 */
export function buildStreamChunks(
  reply: ScriptedReply,
  context: CompletionContext,
  options: { includeUsage: boolean; usage: CompletionUsage },
): ChatCompletionChunk[] {
  const chunk = (
    delta: ChatCompletionChunk.Choice.Delta,
    finishReason: ChatCompletionChunk.Choice['finish_reason'] = null,
  ): ChatCompletionChunk => ({
    ...header(context),
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    // The real API only adds `usage: null` when usage was requested.
    ...(options.includeUsage ? { usage: null } : {}),
  });

  const chunks: ChatCompletionChunk[] = [chunk({ role: 'assistant', content: '', refusal: null })];
  // Not in the SDK's types: the field OpenAI-compatible servers stream thinking in.
  const reasoningField = reply.reasoningField ?? 'reasoning_content';
  for (const word of splitWords(reply.reasoning ?? ''))
    chunks.push(chunk({ [reasoningField]: word } as ChatCompletionChunk.Choice.Delta));
  for (const word of splitWords(reply.text ?? '')) chunks.push(chunk({ content: word }));
  resolveToolCalls(reply, context.turnIndex).forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of splitArguments(call.arguments, reply.argumentChunks ?? 3)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  const finishReason = resolveFinishReason(reply);
  if (finishReason !== null) chunks.push(chunk({}, finishReason));
  if (options.includeUsage) chunks.push({ ...header(context), choices: [], usage: options.usage });
  return chunks;
}

/** The non-streaming `chat.completion` object for a reply. */
export function buildCompletion(
  reply: ScriptedReply,
  context: CompletionContext,
  usage: CompletionUsage,
): ChatCompletion {
  const toolCalls: ChatCompletionMessageFunctionToolCall[] = resolveToolCalls(
    reply,
    context.turnIndex,
  ).map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  const hasToolCalls = toolCalls.length > 0;
  return {
    ...header(context),
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? (hasToolCalls ? null : ''),
          refusal: null,
          ...(hasToolCalls ? { tool_calls: toolCalls } : {}),
          annotations: [],
        },
        logprobs: null,
        // A non-streamed completion always has a finish reason; `null` only shapes streams.
        finish_reason: resolveFinishReason(reply) ?? 'stop',
      },
    ],
    usage,
  };
}

/** OpenAI's error body for a status; `type` and `code` follow what the real API sends for it. */
export function buildErrorBody(status: number, message: string): OpenAIErrorBody {
  if (status === 429) {
    return { error: { message, type: 'requests', param: null, code: 'rate_limit_exceeded' } };
  }
  if (status >= 500) return { error: { message, type: 'server_error', param: null, code: null } };
  if (status === 401)
    return {
      error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    };
  return { error: { message, type: 'invalid_request_error', param: null, code: null } };
}

/** The `GET /models` list: a single test model. */
export function buildModelList(created: number): {
  object: 'list';
  data: { id: string; object: 'model'; created: number; owned_by: string }[];
} {
  return {
    object: 'list',
    data: [{ id: TEST_MODEL_ID, object: 'model', created, owned_by: 'airlock' }],
  };
}

/** Key order matches the real API, which keeps the raw SSE text comparable to captured traffic. */
function header(context: CompletionContext): {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint: string;
} {
  return {
    id: context.id,
    object: 'chat.completion.chunk',
    created: context.created,
    model: context.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}

function roughTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** What a request sends the model: Chat Completions `messages` or Responses `input`. */
function messagesOf(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  if ('messages' in body) return body.messages;
  return 'input' in body ? body.input : body;
}
