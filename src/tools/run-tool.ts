import type {
  ToolCallRequest,
  ToolCheck,
  ToolContentResult,
  ToolImage,
  ToolOutcome,
} from '../protocol/tools';
import type { Tool, ToolContext } from './define-tool';
import { formatIssues, type ValidationResult } from './standard-schema';
import { toolCancelled } from './tool-cancelled';
import { toolFailure } from './tool-failure';
import { ToolFault } from './tool-fault';

/** The longest output the model sees from a tool that sets no `maxOutputChars`. */
export const DEFAULT_MAX_OUTPUT_CHARS = 20_000;

/** Validates a call's arguments and evaluates the tool's approval and sink rules. Never rejects. */
export async function checkTool(tool: Tool, request: ToolCallRequest): Promise<ToolCheck> {
  const validation = await validate(tool, request);
  if ('failure' in validation) return validation.failure;
  if (validation.issues) return invalidArguments(tool, validation.issues);
  const rule = tool.needsApproval;
  const sinkRule = tool.sink;
  let needsApproval = rule === true;
  try {
    if (typeof rule === 'function') needsApproval = (await rule(validation.value)) === true;
  } catch (thrown) {
    return toolFailure(
      'tool-failed',
      `The approval rule of tool "${tool.name}" failed: ${describeThrown(thrown)}`,
    );
  }
  if (typeof sinkRule !== 'function') return { ok: true, needsApproval };
  try {
    const sink = await sinkRule(validation.value);
    // Anything but a destination or `false` counts as a sink: the safe side.
    return { ok: true, needsApproval, sink: typeof sink === 'string' ? sink : sink !== false };
  } catch (thrown) {
    return toolFailure(
      'tool-failed',
      `The sink rule of tool "${tool.name}" failed: ${describeThrown(thrown)}`,
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
  if (signal.aborted) return toolCancelled(tool.name);
  let output: unknown;
  try {
    const context: ToolContext = callTool
      ? { callId: request.callId, signal, callTool }
      : { callId: request.callId, signal };
    output = await tool.execute(validation.value, context);
  } catch (thrown) {
    if (signal.aborted) return toolCancelled(tool.name);
    if (thrown instanceof ToolFault)
      return toolFailure(thrown.code, capContent(thrown.message, 2_000));
    return toolFailure('tool-failed', `Tool "${tool.name}" failed: ${describeThrown(thrown)}`);
  }
  return serializeOutput(tool.name, output, tool.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS);
}

/**
 * Turns a tool's return value into the text the model reads and a clone-safe value for
 * events, cut to `maxChars` here, where the tool ran, so a huge output never crosses a thread.
 */
export function serializeOutput(toolName: string, output: unknown, maxChars: number): ToolOutcome {
  if (isContentResult(output)) return serializeContent(output, maxChars);
  let content: string | undefined;
  try {
    content = typeof output === 'string' ? output : JSON.stringify(output);
  } catch (error) {
    return toolFailure(
      'tool-output-not-serializable',
      `Tool "${toolName}" returned a value that cannot be represented as JSON: ${describeThrown(error)}`,
    );
  }
  if (content === undefined) {
    return toolFailure(
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

/** The most images one tool result may carry. */
export const MAX_TOOL_IMAGES = 4;

/** The longest base64 of one image a tool may return (10 MiB of bytes). */
export const MAX_TOOL_IMAGE_CHARS = Math.ceil((10 * 1024 * 1024) / 3) * 4;

function isContentResult(output: unknown): output is ToolContentResult {
  if (typeof output !== 'object' || output === null) return false;
  const { type, parts } = output as { type?: unknown; parts?: unknown };
  return type === 'content' && Array.isArray(parts);
}

/**
 * A tool's text and images: the text parts are the output the model reads in the tool
 * message (cut to `maxChars`); images that are well-formed and within the caps travel
 * beside it (the agent worker checks their bytes), and the text says how many.
 */
function serializeContent(result: ToolContentResult, maxChars: number): ToolOutcome {
  const texts: string[] = [];
  const images: ToolImage[] = [];
  let dropped = 0;
  for (const part of result.parts as readonly unknown[]) {
    const { type, text, mediaType, data } = (part ?? {}) as Record<string, unknown>;
    if (type === 'text' && typeof text === 'string') texts.push(text);
    else if (
      type === 'image' &&
      typeof mediaType === 'string' &&
      typeof data === 'string' &&
      data.length <= MAX_TOOL_IMAGE_CHARS &&
      images.length < MAX_TOOL_IMAGES
    )
      images.push({ type: 'image', mediaType, data });
    else dropped++;
  }
  const notes = [
    images.length > 0
      ? `[${images.length} image${images.length === 1 ? '' : 's'} returned: sent in the next message]`
      : '',
    dropped > 0
      ? `[${dropped} part${dropped === 1 ? '' : 's'} left out: not text or a valid image within the limits]`
      : '',
  ].filter(Boolean);
  const content = capContent([texts.join('\n'), ...notes].filter(Boolean).join('\n'), maxChars);
  return {
    ok: true,
    // The page's value names the images without carrying their bytes again.
    output: {
      type: 'content',
      parts: [
        ...texts.map((text) => ({ type: 'text', text })),
        ...images.map((image) => ({
          type: 'image',
          mediaType: image.mediaType,
          chars: image.data.length,
        })),
      ],
    },
    content,
    ...(images.length > 0 ? { images } : {}),
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
      failure: toolFailure(
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
  return toolFailure(
    'tool-invalid-arguments',
    `The arguments do not match the schema of tool "${tool.name}": ${formatIssues(issues)}. Correct them and call the tool again.`,
  );
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
