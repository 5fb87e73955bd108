import type { ToolCallRequest, ToolCheck, ToolOutcome } from '../protocol/tools';
import type { Tool, ToolContext } from './define-tool';
import { formatIssues, type ValidationResult } from './standard-schema';
import { ToolFault } from './tool-fault';

/** The longest output the model sees from a tool that sets no `maxOutputChars`. */
export const DEFAULT_MAX_OUTPUT_CHARS = 20_000;

/** Validates a call's arguments and evaluates the tool's approval rule. Never rejects. */
export async function checkTool(tool: Tool, request: ToolCallRequest): Promise<ToolCheck> {
  const validation = await validate(tool, request);
  if ('failure' in validation) return validation.failure;
  if (validation.issues) return invalidArguments(tool, validation.issues);
  const rule = tool.needsApproval;
  if (typeof rule !== 'function') return { ok: true, needsApproval: rule === true };
  try {
    return { ok: true, needsApproval: (await rule(validation.value)) === true };
  } catch (thrown) {
    return failure(
      'tool-failed',
      `The approval rule of tool "${tool.name}" failed: ${describeThrown(thrown)}`,
    );
  }
}

/**
 * Validates a call's arguments against the tool's schema, runs it and turns whatever
 * happens into a `ToolOutcome`. It never rejects: every failure is data for the model.
 */
export async function runTool(
  tool: Tool,
  request: ToolCallRequest,
  signal: AbortSignal,
  callTool?: ToolContext['callTool'],
): Promise<ToolOutcome> {
  const validation = await validate(tool, request);
  if ('failure' in validation) return validation.failure;
  if (validation.issues) return invalidArguments(tool, validation.issues);
  if (signal.aborted) return failure('tool-cancelled', `Tool "${tool.name}" was cancelled.`);
  let output: unknown;
  try {
    const context: ToolContext = callTool
      ? { callId: request.callId, signal, callTool }
      : { callId: request.callId, signal };
    output = await tool.execute(validation.value, context);
  } catch (thrown) {
    if (signal.aborted) return failure('tool-cancelled', `Tool "${tool.name}" was cancelled.`);
    if (thrown instanceof ToolFault) return failure(thrown.code, capContent(thrown.message, 2_000));
    return failure('tool-failed', `Tool "${tool.name}" failed: ${describeThrown(thrown)}`);
  }
  return serializeOutput(tool.name, output, tool.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS);
}

/**
 * Turns a tool's return value into the text the model reads and a clone-safe value for
 * events, cut to `maxChars` here, where the tool ran, so a huge output never crosses a thread.
 */
export function serializeOutput(toolName: string, output: unknown, maxChars: number): ToolOutcome {
  let content: string | undefined;
  try {
    content = typeof output === 'string' ? output : JSON.stringify(output);
  } catch (error) {
    return failure(
      'tool-output-not-serializable',
      `Tool "${toolName}" returned a value that cannot be represented as JSON: ${describeThrown(error)}`,
    );
  }
  if (content === undefined) {
    return failure(
      'tool-output-not-serializable',
      `Tool "${toolName}" returned ${typeof output}, which cannot be represented as JSON.`,
    );
  }
  if (content.length > maxChars) {
    const shown = capContent(content, maxChars);
    return { ok: true, output: shown, content: shown };
  }
  // Re-parsed so the value crossing postMessage is exactly what the model saw, and cloneable.
  return {
    ok: true,
    output: typeof output === 'string' ? output : (JSON.parse(content) as unknown),
    content,
  };
}

/** The notice that ends cut output, as `capContent` writes it. */
const CUT_NOTICE = /\n\[output truncated: showing the first (\d+) of \d+ characters\]$/;

/**
 * Output longer than `maxChars`, cut there with a notice the model can read; shorter
 * output as it is. Output already cut to `maxChars` or less (the sandbox cuts where the
 * tool ran, the agent worker again) is left as it is, notice included.
 */
export function capContent(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  const noticeAt = content.lastIndexOf('\n[output truncated: ');
  const shown = noticeAt >= 0 ? CUT_NOTICE.exec(content.slice(noticeAt))?.[1] : undefined;
  if (shown !== undefined && Number(shown) === noticeAt && noticeAt <= maxChars) return content;
  return `${content.slice(0, maxChars)}\n[output truncated: showing the first ${maxChars} of ${content.length} characters]`;
}

/**
 * Runs the tool's schema on the model's arguments. A schema runs code (transforms,
 * refinements) on input the model chose, so a throw is the model's bad arguments, not a crash.
 */
async function validate(
  tool: Tool,
  request: ToolCallRequest,
): Promise<ValidationResult<unknown> | { readonly failure: ToolCheck & { ok: false } }> {
  try {
    return await tool.parameters['~standard'].validate(request.arguments);
  } catch (thrown) {
    return {
      failure: failure(
        'tool-invalid-arguments',
        `The arguments do not fit tool "${tool.name}": its schema failed on them (${describeThrown(thrown)}). Correct them and call the tool again.`,
      ),
    };
  }
}

function invalidArguments(
  tool: Tool,
  issues: Parameters<typeof formatIssues>[0],
): ToolCheck & { ok: false } {
  return failure(
    'tool-invalid-arguments',
    `The arguments do not match the schema of tool "${tool.name}": ${formatIssues(issues)}. Correct them and call the tool again.`,
  );
}

function failure(
  code: Extract<ToolOutcome, { ok: false }>['error']['code'],
  message: string,
): { ok: false; error: { code: typeof code; message: string } } {
  return { ok: false, error: { code, message } };
}

/** The longest description of a thrown value; a tool may throw a whole document. */
const MAX_DESCRIPTION_CHARS = 2_000;

/**
 * Words for whatever was thrown: an Error's message, a string as is, anything else as
 * JSON, else as text. Never throws itself: the value may come from code that made its
 * `message` getter, `toJSON` and `toString` throw on purpose.
 */
export function describeThrown(thrown: unknown): string {
  const described =
    attempt(() => {
      if (thrown instanceof Error) return thrown.message || thrown.name;
      if (typeof thrown === 'string') return thrown;
      return undefined;
    }) ??
    attempt(() => JSON.stringify(thrown)) ??
    attempt(() => String(thrown)) ??
    'a value that cannot be described';
  return described.length > MAX_DESCRIPTION_CHARS
    ? `${described.slice(0, MAX_DESCRIPTION_CHARS)}…`
    : described;
}

/** The string `describe` gives, or undefined if it gives none or throws. */
function attempt(describe: () => unknown): string | undefined {
  try {
    const value = describe();
    return typeof value === 'string' ? value : undefined;
  } catch {
    // Thrown by the value being described; the next way of describing it is tried.
    return undefined;
  }
}
