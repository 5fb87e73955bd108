/**
 * The request policy: what a page may ask the upstream for on the server's key. The body
 * is parsed once, checked field by field against its route, and the proxy forwards its
 * own serialisation of the checked object, never the page's text: with duplicate keys,
 * the value checked is the only value sent.
 */

import { isRecord } from '../errors/field-checks';
import type { ProxyErrorCode } from './error-response.js';
import type { ResolvedRequestPolicy } from './proxy-options.js';
import type { ProxyPath, Route } from './routes.js';
import type { TokenUsage } from './spend-limits.js';

/** A body that passed, ready to forward. */
export interface CheckedRequest {
  readonly kind: 'checked';
  /** The object to serialise and forward (a fresh copy; the page's object is not touched). */
  readonly body: Record<string, unknown>;
  readonly model: string;
  /** Whether the page asked for an event stream. */
  readonly stream: boolean;
  /** The proxy asked for streamed usage the page did not: strip it from what the page sees. */
  readonly stripStreamUsage: boolean;
  /** What to count when the upstream reports no usage: the input estimated, the output at its cap. */
  readonly fallbackUsage: TokenUsage;
}

/** Why a body was refused. */
export interface PolicyRefusal {
  readonly kind: 'refused';
  readonly status: 400 | 403;
  readonly code: ProxyErrorCode;
  readonly message: string;
  readonly param: string | null;
}

/** Characters per token, for the estimate of a request's input when the upstream reports none. */
const CHARS_PER_TOKEN = 4;

/** Checks `body` for `path` under `policy`. */
export function applyRequestPolicy(
  path: ProxyPath,
  route: Route,
  body: Record<string, unknown>,
  policy: ResolvedRequestPolicy,
): CheckedRequest | PolicyRefusal {
  const allowed = (name: string): boolean =>
    route.fields.has(name) || policy.extraFields[path].has(name);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!allowed(name)) {
      if (policy.unknownFields === 'drop') continue;
      return refuse(
        400,
        'field_not_allowed',
        `The field "${name}" is not allowed through this proxy.`,
        name,
      );
    }
    const check =
      name === 'input'
        ? path === 'embeddings'
          ? stringOrStrings
          : stringOrObjects
        : FIELD_TYPES.get(name);
    const problem = check?.(value);
    if (problem !== undefined) {
      return refuse(400, 'invalid_field', `The field "${name}" must be ${problem}.`, name);
    }
    // Defined, not assigned: a field a deployment allowed named `__proto__` stays a field.
    // Every other name is assigned, which keeps `out` a fast object.
    if (name === '__proto__') {
      Object.defineProperty(out, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[name] = value;
    }
  }

  const model = out.model;
  if (typeof model !== 'string' || !policy.allowedModels.has(model)) {
    return refuse(
      403,
      'model_not_allowed',
      `The model ${model === undefined ? '(none given)' : JSON.stringify(model)} is not allowed through this proxy.`,
      'model',
    );
  }
  if (typeof out.n === 'number' && out.n > policy.maxN) {
    return refuse(400, 'limit_exceeded', `\`n\` may be at most ${policy.maxN} here.`, 'n');
  }
  if (out.store === true && !policy.allowStore) {
    return refuse(
      400,
      'field_not_allowed',
      '`store: true` is not allowed through this proxy.',
      'store',
    );
  }
  // Responses stores by default: left out, it would be `true`.
  if (route.storesByDefault && out.store === undefined && !policy.allowStore) out.store = false;
  if (out.service_tier !== undefined && out.service_tier !== null) {
    if (!policy.allowedServiceTiers.has(out.service_tier as string)) {
      return refuse(
        400,
        'field_not_allowed',
        `\`service_tier: ${JSON.stringify(out.service_tier)}\` is not allowed through this proxy.`,
        'service_tier',
      );
    }
  }
  const tools = checkTools(route, out.tools, policy);
  if (tools) return tools;
  const items = checkItems(route, out, policy);
  if (typeof items !== 'number') return items;

  const outputCap = capOutput(route, out, policy.maxTokens);
  const stream = out.stream === true;
  let stripStreamUsage = false;
  if (stream && route.streamUsageOnRequest) {
    const options = (out.stream_options ?? {}) as Record<string, unknown>;
    if (options.include_usage !== true) {
      // The proxy needs the usage to count spending; the page did not ask, so it will not see it.
      out.stream_options = { ...options, include_usage: true };
      stripStreamUsage = true;
    }
  }
  return {
    kind: 'checked',
    body: out,
    model,
    stream,
    stripStreamUsage,
    fallbackUsage: {
      inputTokens: Math.ceil(items / CHARS_PER_TOKEN),
      outputTokens: outputCap,
    },
  };
}

/** Tool definitions: how many, and only `function` tools unless built-in ones are allowed. */
function checkTools(
  route: Route,
  tools: unknown,
  policy: ResolvedRequestPolicy,
): PolicyRefusal | undefined {
  if (tools === undefined || tools === null || route.toolShape === 'none') return undefined;
  const list = tools as unknown[];
  if (list.length > policy.maxTools) {
    return refuse(
      400,
      'limit_exceeded',
      `At most ${policy.maxTools} tools may be sent here.`,
      'tools',
    );
  }
  for (const [index, tool] of list.entries()) {
    const param = `tools[${index}]`;
    if (!isRecord(tool) || typeof tool.type !== 'string') {
      return refuse(
        400,
        'invalid_field',
        `\`${param}\` must be an object with a string \`type\`.`,
        param,
      );
    }
    if (tool.type !== 'function') {
      if (policy.allowBuiltInTools) continue;
      return refuse(
        400,
        'field_not_allowed',
        `The built-in tool type ${JSON.stringify(tool.type)} is not allowed through this proxy; only "function" tools are.`,
        param,
      );
    }
    const name =
      route.toolShape === 'nested' && isRecord(tool.function) ? tool.function.name : tool.name;
    if (typeof name !== 'string') {
      return refuse(400, 'invalid_field', `\`${param}\` must name its function.`, param);
    }
  }
  return undefined;
}

/** Counts and sizes the messages / input items; answers their total size in characters. */
function checkItems(
  route: Route,
  body: Record<string, unknown>,
  policy: ResolvedRequestPolicy,
): number | PolicyRefusal {
  const name = route.itemsField;
  if (name === undefined) return 0;
  const value = body[name];
  if (value === undefined) {
    return refuse(400, 'invalid_field', `The field "${name}" is required.`, name);
  }
  const items = typeof value === 'string' ? [value] : (value as unknown[]);
  if (items.length > policy.maxMessages) {
    return refuse(
      400,
      'limit_exceeded',
      `At most ${policy.maxMessages} items may be sent in "${name}" here (got ${items.length}).`,
      name,
    );
  }
  // The items' JSON sizes summed, from one serialisation of the list: `[a,b,c]` is the items'
  // texts, n − 1 commas and two brackets. Only a list over the cap is measured item by item.
  const total =
    typeof value === 'string'
      ? value.length
      : JSON.stringify(items).length - 2 - Math.max(0, items.length - 1);
  if (total <= policy.maxMessageChars) return total;
  for (const [index, item] of items.entries()) {
    const size = typeof item === 'string' ? item.length : JSON.stringify(item).length;
    if (size > policy.maxMessageChars) {
      return refuse(
        400,
        'limit_exceeded',
        `"${name}[${index}]" is ${size} characters; at most ${policy.maxMessageChars} are allowed here.`,
        `${name}[${index}]`,
      );
    }
  }
  return total;
}

/**
 * Lowers every output limit above `cap` to it; with none given, sets the route's first
 * one. Answers the effective cap (the smallest limit given, or `cap`).
 */
function capOutput(route: Route, body: Record<string, unknown>, cap: number): number {
  if (route.outputFields.length === 0) return 0;
  let effective = cap;
  let present = false;
  for (const name of route.outputFields) {
    const value = body[name];
    // `null` is the API's spelling of "no limit": the same as leaving the field out.
    if (value === undefined || value === null) {
      delete body[name];
      continue;
    }
    present = true;
    const limit = Math.min(value as number, cap);
    body[name] = limit;
    effective = Math.min(effective, limit);
  }
  const first = route.outputFields[0];
  if (!present && first !== undefined) body[first] = cap;
  return effective;
}

function refuse(
  status: 400 | 403,
  code: ProxyErrorCode,
  message: string,
  param: string | null,
): PolicyRefusal {
  return { kind: 'refused', status, code, message, param };
}

/** Checks one field's type; answers what it must be when it is not. */
type TypeCheck = (value: unknown) => string | undefined;

const isNullable =
  (check: TypeCheck): TypeCheck =>
  (value) =>
    value === null ? undefined : check(value);

const string: TypeCheck = (value) => (typeof value === 'string' ? undefined : 'a string');
const boolean: TypeCheck = (value) => (typeof value === 'boolean' ? undefined : 'a boolean');
const object: TypeCheck = (value) => (isRecord(value) ? undefined : 'an object');
const finite: TypeCheck = (value) =>
  typeof value === 'number' && Number.isFinite(value) ? undefined : 'a number';
const positiveInteger: TypeCheck = (value) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0
    ? undefined
    : 'a positive integer';
const integer: TypeCheck = (value) =>
  typeof value === 'number' && Number.isSafeInteger(value) ? undefined : 'an integer';
const objectList: TypeCheck = (value) =>
  Array.isArray(value) && value.every(isRecord) ? undefined : 'an array of objects';
const stringOrObject: TypeCheck = (value) =>
  typeof value === 'string' || isRecord(value) ? undefined : 'a string or an object';
const strings: TypeCheck = (value) =>
  Array.isArray(value) && value.every((item) => typeof item === 'string')
    ? undefined
    : 'an array of strings';
const stringOrStrings: TypeCheck = (value) =>
  typeof value === 'string' ||
  (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string'))
    ? undefined
    : 'a string or a non-empty array of strings';
const stringOrObjects: TypeCheck = (value) =>
  typeof value === 'string' || (Array.isArray(value) && value.every(isRecord))
    ? undefined
    : 'a string or an array of objects';
const messages: TypeCheck = (value) =>
  Array.isArray(value) &&
  value.length > 0 &&
  value.every((message) => isRecord(message) && typeof message.role === 'string')
    ? undefined
    : 'a non-empty array of objects with a string `role`';
const streamOptions: TypeCheck = (value) =>
  isRecord(value) &&
  Object.entries(value).every(
    ([name, flag]) =>
      (name === 'include_usage' || name === 'include_obfuscation') && typeof flag === 'boolean',
  )
    ? undefined
    : 'an object of `include_usage` / `include_obfuscation` booleans';
const encodingFormat: TypeCheck = (value) =>
  value === 'float' || value === 'base64' ? undefined : '"float" or "base64"';

/**
 * The type of every field a route knows (`input` is checked per route, above). Fields a
 * deployment adds through `extraFields` and that are not listed here pass as any JSON value.
 */
const FIELD_TYPES: ReadonlyMap<string, TypeCheck> = new Map(
  Object.entries({
    model: string,
    messages,
    instructions: isNullable(string),
    stream: isNullable(boolean),
    stream_options: isNullable(streamOptions),
    tools: isNullable(objectList),
    tool_choice: isNullable(stringOrObject),
    parallel_tool_calls: isNullable(boolean),
    temperature: isNullable(finite),
    top_p: isNullable(finite),
    presence_penalty: isNullable(finite),
    frequency_penalty: isNullable(finite),
    max_tokens: isNullable(positiveInteger),
    max_completion_tokens: isNullable(positiveInteger),
    max_output_tokens: isNullable(positiveInteger),
    n: isNullable(positiveInteger),
    seed: isNullable(integer),
    stop: isNullable(stringOrStrings),
    response_format: isNullable(object),
    text: isNullable(object),
    reasoning: isNullable(object),
    reasoning_effort: isNullable(string),
    include: isNullable(strings),
    user: string,
    store: isNullable(boolean),
    service_tier: isNullable(string),
    encoding_format: encodingFormat,
    dimensions: positiveInteger,
  }),
);
