import { describeThrown } from '../tools/run-tool';
import { ToolFault } from '../tools/tool-fault';
import { isHostStackOverflow } from './quickjs-engine';

// How a script's end becomes the code tool's documented error: `tool-memory-limit`,
// `tool-timeout`, or `tool-failed` with what the model needs to correct its code.

/** Where a script ended, besides the value it ended with. */
export interface FaultSituation {
  /** The limits the script ran under. */
  readonly memoryBytes: number;
  readonly stackBytes: number;
  readonly timeoutMs: number;
  /** The error came from compiling the script, not from running it. */
  readonly whileParsing: boolean;
  /** The WebAssembly memory refused to grow while the script ran. */
  readonly heapFull: boolean;
  /** The run was aborted. */
  readonly aborted: boolean;
  /** Characters before the model's code on the script's first line. */
  readonly prefixChars: number;
}

/** The typed fault for the value a script ended with, as dumped out of QuickJS. */
export function scriptFault(error: unknown, situation: FaultSituation): ToolFault {
  const { name, message, stack } = readError(error);
  // With the heap at its cap, QuickJS may not even have room for its error and throws null.
  if (
    (name === 'InternalError' && message === 'out of memory') ||
    (error === null && situation.heapFull)
  ) {
    return new ToolFault(
      'tool-memory-limit',
      `The script went over its memory limit of ${situation.memoryBytes} bytes and was stopped.`,
    );
  }
  if (name === 'InternalError' && message === 'interrupted') {
    return situation.aborted
      ? new ToolFault('tool-failed', 'The run was aborted.')
      : timedOut(situation.timeoutMs);
  }
  const where = position(stack, situation.prefixChars);
  const at = where ? ` at line ${where.line}, column ${where.column}` : '';
  // QuickJS's own check, in the interpreter or in the parser (of the script, `eval` or JSON).
  if ((name === 'InternalError' || name === 'SyntaxError') && message === 'stack overflow') {
    return new ToolFault(
      'tool-failed',
      `The script overflowed its stack of ${situation.stackBytes} bytes${at}: its recursion or nesting is too deep.`,
    );
  }
  if (situation.whileParsing || name === 'SyntaxError') {
    return new ToolFault('tool-failed', `${name}${at}: ${message}`);
  }
  return new ToolFault('tool-failed', `The script threw ${name}${at}: ${message}`);
}

/** The fault of a script past its deadline. */
export function timedOut(timeoutMs: number): ToolFault {
  return new ToolFault(
    'tool-timeout',
    `The script did not finish within ${timeoutMs} ms and was interrupted.`,
  );
}

/**
 * The fault of a script that broke its engine: the browser's own stack ran out inside the
 * WebAssembly (the overflow QuickJS's check did not see coming), or the module trapped.
 */
export function brokenEngineFault(error: unknown, stackBytes: number): ToolFault {
  if (isHostStackOverflow(error)) {
    return new ToolFault(
      'tool-failed',
      `The script overflowed its stack: its recursion or nesting is too deep (the browser's stack ran out before the script's ${stackBytes} bytes).`,
    );
  }
  return new ToolFault(
    'tool-failed',
    `The script's engine failed (${describeThrown(error)}); the next script runs in a fresh one.`,
  );
}

/** The fault of a script whose engine another script broke while it waited for a tool. */
export function sharedEngineFault(): ToolFault {
  return new ToolFault(
    'tool-failed',
    'Another script running in the same engine broke it while this one waited; the script was stopped and may be run again.',
  );
}

/** Name, message and stack of whatever the script threw (an Error, or any value). */
function readError(error: unknown): { name: string; message: string; stack: string } {
  if (typeof error === 'object' && error !== null) {
    const record = error as Record<string, unknown>;
    return {
      name: typeof record.name === 'string' ? record.name : 'Error',
      message: typeof record.message === 'string' ? record.message : safeJson(error),
      stack: typeof record.stack === 'string' ? record.stack : '',
    };
  }
  return { name: 'a value', message: safeJson(error), stack: '' };
}

/** `value` as JSON, or as a string when it has none. */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Line and column in the model's code of the first stack frame in the script. */
function position(
  stack: string,
  prefixChars: number,
): { line: number; column: number } | undefined {
  const match = /script\.js:(\d+):(\d+)/.exec(stack);
  if (!match) return undefined;
  const line = Number(match[1]);
  const column = Number(match[2]);
  // The wrapper shares the first line with the model's code.
  return { line, column: line === 1 ? Math.max(1, column - prefixChars) : column };
}
