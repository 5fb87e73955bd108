import { JSONRepairError, jsonrepair } from 'jsonrepair';

type JsonSchema = Readonly<Record<string, unknown>>;

/** A run's structured output as the model is asked for it: `response_format`'s `json_schema`. */
export interface ResponseFormat {
  readonly name: string;
  readonly schema: JsonSchema;
  /**
   * Whether the endpoint is asked to hold the model to the schema exactly. OpenAI's strict
   * mode takes only schemas whose objects list every property as required; others are sent
   * with `strict: false` and checked on the page all the same.
   */
  readonly strict: boolean;
}

/**
 * The `response_format` for an output schema. Objects that do not say whether they take
 * other properties are closed (`additionalProperties: false`), as strict mode requires and
 * as the page's schema (which strips or refuses unknown keys) expects.
 */
export function responseFormat(schema: JsonSchema): ResponseFormat {
  let strict = true;
  const close = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(close);
    if (node === null || typeof node !== 'object') return node;
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      // Property names are data, not schemas: walk their schemas, keep the names.
      copy[key] =
        (key === 'properties' || key === '$defs' || key === 'definitions') && isRecord(value)
          ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, close(sub)]))
          : close(value);
    }
    if (isRecord(copy.properties)) {
      if (copy.additionalProperties === undefined) copy.additionalProperties = false;
      const required = Array.isArray(copy.required) ? copy.required : [];
      if (Object.keys(copy.properties).some((name) => !required.includes(name))) strict = false;
      if (copy.additionalProperties !== false) strict = false;
    }
    return copy;
  };
  return { name: 'output', schema: close(schema) as JsonSchema, strict };
}

/**
 * What the system message says when the endpoint cannot take `response_format` (prompted
 * structured output): answer with JSON alone, fitting the schema.
 */
export function outputNotice(schema: JsonSchema): string {
  return (
    'When you give your final answer, answer with a single JSON value and nothing else (no ' +
    'prose, no code fence), fitting this JSON Schema:\n' +
    JSON.stringify(schema)
  );
}

/**
 * The JSON value a final answer holds, mended where models commonly slip: a code fence,
 * trailing commas, single quotes, comments, prose before the value. `ok: false` says why
 * nothing could be read, in words the model can act on.
 */
export function readJsonAnswer(
  text: string,
):
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string } {
  for (const candidate of candidates(text)) {
    const read = mended(candidate);
    if (read) return { ok: true, value: read.value };
  }
  return { ok: false, reason: 'The answer is not JSON.' };
}

/**
 * The JSON streamed so far, parsed as far as it goes (unclosed strings, arrays and objects
 * closed), or undefined while nothing of a value has arrived.
 */
export function partialJson(text: string): unknown {
  const start = text.search(/[[{]/);
  return start === -1 ? undefined : mended(text.slice(start))?.value;
}

/**
 * Tool-call arguments that are not valid JSON, mended (an unclosed brace, unquoted keys,
 * single quotes, a trailing comma): the object they meant, or undefined when the mended text
 * is no object (prose, a bare string) and the call is better refused.
 */
export function repairArguments(text: string): Record<string, unknown> | undefined {
  const value = mended(text)?.value;
  return isRecord(value) ? value : undefined;
}

/**
 * The value of `text` once repaired, or undefined when it cannot be. The text is the
 * model's: besides what the repair refuses, a deeply nested one (`[[[[…`) overflows its
 * recursive descent, which means "cannot be read" too, never a failed run.
 */
function mended(text: string): { readonly value: unknown } | undefined {
  try {
    return { value: JSON.parse(jsonrepair(text)) as unknown };
  } catch (error) {
    if (error instanceof JSONRepairError || error instanceof SyntaxError || isStackOverflow(error))
      return undefined;
    throw error;
  }
}

/**
 * A stack overflow as each engine throws it: a RangeError in V8 and JavaScriptCore,
 * SpiderMonkey's own `InternalError` ("too much recursion") in Firefox.
 */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError || (error instanceof Error && error.name === 'InternalError');
}

/**
 * Where the JSON may be, likeliest first: the inside of its first code fence, the span from
 * its first `{` or `[` to its last `}` or `]` (prose around the value), the answer as
 * written. (The repair is lenient enough to make a list of prose, so prose goes last.)
 */
function candidates(text: string): string[] {
  const fenced = /```[a-zA-Z]*\s*\n([\s\S]*?)```/.exec(text)?.[1];
  const start = text.search(/[[{]/);
  const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
  const span = start >= 0 && end > start ? text.slice(start, end + 1) : undefined;
  return [...new Set([fenced, span, text].filter((part): part is string => part !== undefined))];
}

/**
 * As `isRecord` of `errors/field-checks`, kept here on purpose: importing that module from
 * this lazily loaded one makes bundlers split it into a chunk of its own, which costs the
 * worker's start 0.3 KB gzip (`npm run size`) to save three lines.
 */
function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
