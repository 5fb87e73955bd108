import type { ToolCallRequest, ToolOutcome } from '../protocol/tools';
import type { Tool } from './define-tool';
import { formatIssues } from './standard-schema';

/**
 * Validates a call's arguments against the tool's schema, runs it and turns whatever
 * happens into a `ToolOutcome`. It never rejects: every failure is data for the model.
 */
export async function runTool(
  tool: Tool,
  request: ToolCallRequest,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const validation = await tool.parameters['~standard'].validate(request.arguments);
  if (validation.issues) {
    return failure(
      'tool-invalid-arguments',
      `The arguments do not match the schema of tool "${tool.name}": ${formatIssues(validation.issues)}. Correct them and call the tool again.`,
    );
  }
  if (signal.aborted) return failure('tool-cancelled', `Tool "${tool.name}" was cancelled.`);
  let output: unknown;
  try {
    output = await tool.execute(validation.value, { callId: request.callId, signal });
  } catch (thrown) {
    if (signal.aborted) return failure('tool-cancelled', `Tool "${tool.name}" was cancelled.`);
    return failure('tool-failed', `Tool "${tool.name}" failed: ${describeThrown(thrown)}`);
  }
  return serializeOutput(tool.name, output);
}

/** Turns a tool's return value into the text the model reads and a clone-safe value for events. */
export function serializeOutput(toolName: string, output: unknown): ToolOutcome {
  if (typeof output === 'string') return { ok: true, output, content: output };
  let content: string | undefined;
  try {
    content = JSON.stringify(output);
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
  // Re-parsed so the value crossing postMessage is exactly what the model saw, and cloneable.
  return { ok: true, output: JSON.parse(content) as unknown, content };
}

function failure(
  code: Extract<ToolOutcome, { ok: false }>['error']['code'],
  message: string,
): ToolOutcome {
  return { ok: false, error: { code, message } };
}

function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message || thrown.name;
  if (typeof thrown === 'string') return thrown;
  try {
    return JSON.stringify(thrown) ?? String(thrown);
  } catch {
    return String(thrown);
  }
}
