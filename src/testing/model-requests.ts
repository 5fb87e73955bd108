import type { IncomingMessage, ServerResponse } from 'node:http';
import { HASHED_EMBEDDING_DIMENSION } from './hashed-embedding.js';
import { isObject, sendError, sendJson } from './http-answers.js';

// What the fake model server reads of a request as OpenAI would: its route, whether it uses
// function calling, whether its response format would be refused; and the embeddings
// answer, which is computed, not scripted.

/**
 * Why OpenAI would refuse this `response_format`, if it would: a `json_schema` without a
 * name or schema, or marked `strict` with an object that does not list every property as
 * required or does not set `additionalProperties: false`.
 */
export function responseFormatRefusal(format: unknown): string | undefined {
  if (!isObject(format) || (format.type !== 'json_schema' && format.type !== 'json_object'))
    return "Invalid 'response_format': expected type 'json_schema' or 'json_object'.";
  if (format.type === 'json_object') return undefined;
  const spec = format.json_schema;
  if (!isObject(spec) || typeof spec.name !== 'string' || !isObject(spec.schema))
    return "Invalid 'response_format.json_schema': a name and a schema are required.";
  if (spec.strict !== true) return undefined;
  const problems: string[] = [];
  const visit = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, `${path}/${index}`);
      return;
    }
    if (!isObject(node)) return;
    if (isObject(node.properties)) {
      const required = Array.isArray(node.required) ? node.required : [];
      const missing = Object.keys(node.properties).filter((name) => !required.includes(name));
      if (missing.length > 0)
        problems.push(`${path || '/'}: 'required' must list ${missing.join(', ')}`);
      if (node.additionalProperties !== false)
        problems.push(`${path || '/'}: 'additionalProperties' must be false`);
    }
    for (const [key, value] of Object.entries(node)) visit(value, `${path}/${key}`);
  };
  visit(spec.schema, '');
  return problems.length === 0
    ? undefined
    : `Invalid schema for response_format '${spec.name}': ${problems.join('; ')}.`;
}

/** Whether a request relies on function calling: tool definitions, tool choice, or tool messages or items. */
export function usesTools(body: Record<string, unknown>): boolean {
  if ('tools' in body || 'tool_choice' in body) return true;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const items = Array.isArray(body.input) ? body.input : [];
  return (
    messages.some(
      (message) => isObject(message) && (message.role === 'tool' || 'tool_calls' in message),
    ) ||
    items.some(
      (item) =>
        isObject(item) && (item.type === 'function_call' || item.type === 'function_call_output'),
    )
  );
}

/**
 * A Responses request's `text.format`, in the `response_format` shape the check reads
 * (`{ type, json_schema: { name, schema, strict } }`); `undefined` when it asks for plain text.
 */
export function responsesFormat(body: Record<string, unknown>): unknown {
  const format = isObject(body.text) ? body.text.format : undefined;
  if (format === undefined || (isObject(format) && format.type === 'text')) return undefined;
  if (!isObject(format) || format.type !== 'json_schema') return format;
  const { type, ...spec } = format;
  return { type, json_schema: spec };
}

export type Route = 'chat' | 'responses' | 'models' | 'embeddings';

/** Which API a request is for, by its path; `null` for any other. */
export function routeOf(req: IncomingMessage): Route | null {
  const pathname = (req.url ?? '/').split('?')[0]?.replace(/\/+$/, '') ?? '';
  if (pathname.endsWith('/chat/completions')) return 'chat';
  if (pathname.endsWith('/responses')) return 'responses';
  if (pathname.endsWith('/models')) return 'models';
  if (pathname.endsWith('/embeddings')) return 'embeddings';
  return null;
}

/**
 * Answers an embeddings request like the real API: one vector per input from `embed`
 * (`dimensions` long if asked, else 256), as floats or as base64 little-endian float32
 * (what the `openai` SDK asks for unless told otherwise). Not scripted: it takes no turn
 * of the chat script.
 */
export function answerEmbeddings(
  res: ServerResponse,
  body: unknown,
  embed: (input: string, dimension: number) => number[],
): void {
  if (!isObject(body)) {
    sendError(res, 400, 'We could not parse the JSON body of your request.');
    return;
  }
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (
    !Array.isArray(inputs) ||
    inputs.length === 0 ||
    !inputs.every((input) => typeof input === 'string')
  ) {
    sendError(res, 400, "'input' must be a string or a non-empty array of strings.");
    return;
  }
  const dimension =
    typeof body.dimensions === 'number' && Number.isInteger(body.dimensions) && body.dimensions > 0
      ? body.dimensions
      : HASHED_EMBEDDING_DIMENSION;
  const base64 = body.encoding_format === 'base64';
  const tokens = inputs.reduce((sum, input) => sum + Math.ceil(input.length / 4), 0);
  sendJson(res, 200, {
    object: 'list',
    data: inputs.map((input, index) => {
      const vector = embed(input, dimension);
      return {
        object: 'embedding',
        index,
        embedding: base64
          ? Buffer.from(Float32Array.from(vector).buffer).toString('base64')
          : vector,
      };
    }),
    model: typeof body.model === 'string' ? body.model : 'airlock-test-embedding',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}
