/**
 * The sentence the offline model writes for each tool result, tool by tool. Each reads
 * only the fields it checks, and falls back to quoting the output.
 */
import { asRecord } from '../shared/json-values.js';

/** A result read back: the tool's output, its error, or nothing at all. */
export type ReadResult =
  | { readonly kind: 'output'; readonly value: unknown; readonly text: string }
  | { readonly kind: 'error'; readonly code: string; readonly message: string }
  | { readonly kind: 'missing' };

type Arguments = Record<string, unknown>;
type Output = Extract<ReadResult, { kind: 'output' }>;
type Failure = Extract<ReadResult, { kind: 'error' }>;

/** The sentence for a call that failed, naming what the user asked for when it can. */
export function describeFailure(tool: string, args: Arguments, failure: Failure): string {
  // Airlock prefixes a thrown error with 'Tool "name" failed: '; the sentence already says so.
  const reason = failure.message.replace(/^Tool "[^"]*" failed: /, '');
  if (failure.code === 'tool-rejected') {
    // Airlock words it 'The user rejected this call to "name": <the user's reason>'.
    const said = reason.replace(/^The user rejected this call to "[^"]*": /, '');
    return `I did not run ${tool}: you declined ("${said}").`;
  }
  if (failure.code === 'flow-refused') {
    return `Airlock's information-flow policy stopped my ${tool} call, so nothing was sent (flow-refused: ${reason})`;
  }
  if (failure.code === 'tool-timeout') {
    return `The ${tool} call missed its deadline, so Airlock stopped it and went on without it (tool-timeout: ${reason})`;
  }
  if (tool === 'get_weather' && typeof args.city === 'string') {
    return `I could not get the weather for ${args.city}: ${reason}`;
  }
  if (tool === 'calculate' && typeof args.expression === 'string') {
    return `I could not calculate ${args.expression}: ${reason}`;
  }
  return `The ${tool} tool failed (${failure.code}): ${reason}`;
}

/** The sentence for a call that succeeded. */
export function describeOutput(tool: string, args: Arguments, output: Output): string {
  const fields = asRecord(output.value);
  switch (tool) {
    case 'get_weather':
      if (
        typeof fields.city === 'string' &&
        typeof fields.temperatureC === 'number' &&
        typeof fields.sky === 'string'
      ) {
        return `In ${fields.city} it is ${fields.temperatureC} °C and ${fields.sky}.`;
      }
      break;
    case 'calculate':
      if (typeof fields.expression === 'string' && typeof fields.result === 'number') {
        return `${fields.expression} = ${fields.result}.`;
      }
      break;
    case 'set_theme':
      if (typeof fields.color === 'string')
        return `Done: the page's accent is ${fields.color} now.`;
      break;
    case 'save_memory':
      if (typeof fields.saved === 'string') {
        return `I will remember that (saved as "${fields.saved}"). It is in the memory panel, and later conversations will know it too.`;
      }
      break;
    case 'recall_memories':
      if (Array.isArray(output.value)) return describeMemories(output.value, args);
      break;
    case 'run_js': {
      const result = asRecord(fields.result);
      if (typeof result.warmest === 'string' && typeof result.averageC === 'number') {
        return `I wrote a script that looked the cities up and compared them: ${result.warmest} is the warmest, ${String(result.coldest)} the coldest, and the average is ${result.averageC} °C.`;
      }
      break;
    }
    case 'fetch_headline':
      if (typeof fields.headline === 'string') return describeHeadline(fields.headline, fields);
      break;
  }
  return `${tool} returned ${truncate(output.text, 200)}.`;
}

function describeMemories(memories: readonly unknown[], args: Arguments): string {
  const lines = memories.flatMap((memory) => {
    const { key, content } = asRecord(memory);
    return typeof key === 'string' && typeof content === 'string' ? [`${key}: ${content}`] : [];
  });
  if (lines.length === 0) {
    const about = typeof args.query === 'string' ? ` about "${args.query}"` : '';
    return `I have nothing saved${about}. Tell me "remember that …" and I will.`;
  }
  return `I remember: ${lines.join('; ')}.`;
}

function describeHeadline(headline: string, fields: Record<string, unknown>): string {
  const sandbox = asRecord(fields.sandbox);
  const facts = [
    typeof sandbox.origin === 'string' ? `its origin is "${sandbox.origin}"` : undefined,
    typeof sandbox.indexedDB === 'string' ? `IndexedDB ${sandbox.indexedDB}` : undefined,
    typeof sandbox.appServer === 'string' ? `the app's server ${sandbox.appServer}` : undefined,
  ].filter((fact) => fact !== undefined);
  const isolation =
    facts.length > 0 ? ` It was made in the iframe sandbox, where ${facts.join(', ')}.` : '';
  return `Headline: "${headline}" (invented).${isolation}`;
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}
