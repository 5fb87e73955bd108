/**
 * How the offline model words the results of its tool calls. It only reads what the
 * tools returned, so the answer never claims more than the tools said.
 */

import { asRecord, parseJson } from '../shared/json-values.js';
import { unwrapToolOutput } from '../shared/tool-output.js';
import type { RequestToolCall } from './chat-request.js';
import { describeFailure, describeOutput, type ReadResult } from './tool-sentences.js';

/** One call of the latest batch and the content of its tool message (undefined if missing). */
export interface CallAndResult {
  readonly call: RequestToolCall;
  readonly content: string | undefined;
}

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
  if (result.kind === 'missing') return `I got no result for the ${call.name} call.`;
  const args = asRecord(parseJson(call.argumentsText));
  return result.kind === 'error'
    ? describeFailure(call.name, args, result)
    : describeOutput(call.name, args, result);
}
