/**
 * The one table of what the proxy forwards: per endpoint its method, the request fields it
 * lets through, where its output limit, items and tools are, and how the upstream reports
 * the tokens a call used. Everything else in the proxy reads this table; a path not in it
 * is answered 404.
 */

import { isRecord } from '../errors/field-checks';
import type { TokenUsage } from './spend-limits.js';

/** An OpenAI endpoint the proxy can forward. */
export type ProxyPath = 'chat/completions' | 'responses' | 'embeddings' | 'models';

/** How one endpoint is checked and metered. */
export interface Route {
  readonly method: 'GET' | 'POST';
  /** Request fields let through as they are (after their checks); every other one is unknown. */
  readonly fields: ReadonlySet<string>;
  /** Output-limit fields capped at `maxTokens`; when none is given the first is set. Empty: no output. */
  readonly outputFields: readonly string[];
  /** The field holding the messages / input items / inputs that `maxMessages` counts. */
  readonly itemsField: string | undefined;
  /** How tool definitions name their function: Chat Completions nests it, Responses does not. */
  readonly toolShape: 'nested' | 'flat' | 'none';
  /** Chat Completions streams usage only when asked (`stream_options.include_usage`). */
  readonly streamUsageOnRequest: boolean;
  /** Whether the endpoint stores by default when `store` is left out (Responses does). */
  readonly storesByDefault: boolean;
  /** The tokens a complete JSON response reports, if it does. */
  usageOf(body: unknown): TokenUsage | undefined;
  /** The tokens one streamed event's data reports, if it does. */
  streamUsageOf(event: unknown): TokenUsage | undefined;
  /** A cheap look at an event's data text: false when it cannot carry usage, so it need not be parsed. */
  mayCarryUsage(data: string): boolean;
}

/** A `"usage"` key with an object value (OpenAI sends `"usage":null` on every other chunk). */
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

/** Whether an event's data has a `"usage"` object; most have no `"usage"` at all, found without the regex. */
const hasUsageObject = (data: string): boolean =>
  data.includes('"usage"') && USAGE_OBJECT.test(data);

/** The Responses events that carry the finished response, and with it its usage. */
const FINAL_RESPONSE_EVENTS: ReadonlySet<string> = new Set([
  'response.completed',
  'response.incomplete',
  'response.failed',
]);

const CHAT_FIELDS = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'stop',
  'seed',
  'response_format',
  'presence_penalty',
  'frequency_penalty',
  'user',
  'store',
  'service_tier',
];

const RESPONSES_FIELDS = [
  'model',
  'input',
  'instructions',
  'stream',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'temperature',
  'top_p',
  'max_output_tokens',
  'text',
  // A stateless client keeps reasoning itself: it asks for the encrypted items and sends them back.
  'include',
  'user',
  'store',
  'service_tier',
];

const EMBEDDINGS_FIELDS = ['model', 'input', 'encoding_format', 'dimensions', 'user'];

/** Every forwardable endpoint, keyed by its path below the mount path. */
export const ROUTES: Readonly<Record<ProxyPath, Route>> = {
  'chat/completions': {
    method: 'POST',
    fields: new Set(CHAT_FIELDS),
    // `max_completion_tokens` is the one every current model accepts; reasoning models refuse `max_tokens`.
    outputFields: ['max_completion_tokens', 'max_tokens'],
    itemsField: 'messages',
    toolShape: 'nested',
    streamUsageOnRequest: true,
    storesByDefault: false,
    usageOf: (body) => chatUsage(field(body, 'usage')),
    streamUsageOf: (event) => chatUsage(field(event, 'usage')),
    mayCarryUsage: hasUsageObject,
  },
  responses: {
    method: 'POST',
    fields: new Set(RESPONSES_FIELDS),
    outputFields: ['max_output_tokens'],
    itemsField: 'input',
    toolShape: 'flat',
    streamUsageOnRequest: false,
    storesByDefault: true,
    usageOf: (body) => responsesUsage(field(body, 'usage')),
    // `response.completed`, `.incomplete` and `.failed` carry the response with its usage.
    streamUsageOf: (event) => {
      const type = field(event, 'type');
      if (typeof type !== 'string' || !FINAL_RESPONSE_EVENTS.has(type)) {
        return undefined;
      }
      return responsesUsage(field(field(event, 'response'), 'usage'));
    },
    mayCarryUsage: (data) => data.includes('"response.') && hasUsageObject(data),
  },
  embeddings: {
    method: 'POST',
    fields: new Set(EMBEDDINGS_FIELDS),
    outputFields: [],
    itemsField: 'input',
    toolShape: 'none',
    streamUsageOnRequest: false,
    storesByDefault: false,
    usageOf: (body) => {
      const usage = field(body, 'usage');
      const input = count(field(usage, 'prompt_tokens'));
      return input === undefined ? undefined : { inputTokens: input, outputTokens: 0 };
    },
    streamUsageOf: () => undefined,
    mayCarryUsage: () => false,
  },
  models: {
    method: 'GET',
    fields: new Set(),
    outputFields: [],
    itemsField: undefined,
    toolShape: 'none',
    streamUsageOnRequest: false,
    storesByDefault: false,
    usageOf: () => ({ inputTokens: 0, outputTokens: 0 }),
    streamUsageOf: () => undefined,
    mayCarryUsage: () => false,
  },
};

/** `{ prompt_tokens, completion_tokens }` as Chat Completions reports them. */
const chatUsage = (usage: unknown) => tokenUsage(usage, 'prompt_tokens', 'completion_tokens');

/** `{ input_tokens, output_tokens }` as the Responses API reports them. */
const responsesUsage = (usage: unknown) => tokenUsage(usage, 'input_tokens', 'output_tokens');

/** A usage object's two counts under the names a route's API gives them, if both are counts. */
function tokenUsage(usage: unknown, inputName: string, outputName: string): TokenUsage | undefined {
  const input = count(field(usage, inputName));
  const output = count(field(usage, outputName));
  return input === undefined || output === undefined
    ? undefined
    : { inputTokens: input, outputTokens: output };
}

function field(value: unknown, name: string): unknown {
  return isRecord(value) ? value[name] : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
