/**
 * How the offline model words the results of its tool calls. It only reads what the
 * tools returned, so the answer never claims more than the tools said.
 */
import type { RequestToolCall } from './chat-request.js';
import { unwrapToolOutput } from './tool-output.js';

/** One call of the latest batch and the content of its tool message (undefined if missing). */
export interface CallAndResult {
  readonly call: RequestToolCall;
  readonly content: string | undefined;
}

/** A result read back: the tool's output, its error, or nothing at all. */
type ReadResult =
  | { readonly kind: 'output'; readonly value: unknown; readonly text: string }
  | { readonly kind: 'error'; readonly code: string; readonly message: string }
  | { readonly kind: 'missing' };

/** A short answer built from each call's result, in call order. */
export function summariseResults(results: readonly CallAndResult[]): string {
  const read = results.map(({ call, content }) => ({ call, result: readResult(content) }));
  const sentences = read.map(({ call, result }) => describe(call, result));
  // The weather tool invents its data; the answer says so rather than pass it off as real.
  if (read.some(({ call, result }) => call.name === 'get_weather' && result.kind === 'output')) {
    sentences.push('(Invented demo data, not a real forecast.)');
  }
  return sentences.join(' ');
}

function readResult(content: string | undefined): ReadResult {
  if (content === undefined) return { kind: 'missing' };
  const text = unwrapToolOutput(content);
  const value = parseJson(text);
  // Airlock sends a failed call as `{ "error": { code, message } }`.
  const error = asRecord(asRecord(value).error);
  if (typeof error.code === 'string' && typeof error.message === 'string') {
    return { kind: 'error', code: error.code, message: error.message };
  }
  return { kind: 'output', value, text };
}

function describe(call: RequestToolCall, result: ReadResult): string {
  const args = asRecord(parseJson(call.argumentsText));
  if (result.kind === 'missing') return `I got no result for the ${call.name} call.`;
  if (result.kind === 'error') {
    // Airlock prefixes a thrown error with 'Tool "name" failed: '; the sentence already says so.
    const reason = result.message.replace(/^Tool "[^"]*" failed: /, '');
    if (call.name === 'get_weather' && typeof args.city === 'string') {
      return `I could not get the weather for ${args.city}: ${reason}`;
    }
    if (call.name === 'calculate' && typeof args.expression === 'string') {
      return `I could not calculate ${args.expression}: ${reason}`;
    }
    return `The ${call.name} tool failed (${result.code}): ${reason}`;
  }
  const fields = asRecord(result.value);
  if (
    call.name === 'get_weather' &&
    typeof fields.city === 'string' &&
    typeof fields.temperatureC === 'number' &&
    typeof fields.sky === 'string'
  ) {
    return `In ${fields.city} it is ${fields.temperatureC} °C and ${fields.sky}.`;
  }
  if (
    call.name === 'calculate' &&
    typeof fields.expression === 'string' &&
    typeof fields.result === 'number'
  ) {
    return `${fields.expression} = ${fields.result}.`;
  }
  return `${call.name} returned ${truncate(result.text, 200)}.`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}
