import type { ChatMessage, ChatToolCall } from '../protocol/chat';
import type { AgentEvent } from '../protocol/events';
import type { ToolDescriptor, ToolHost, ToolOutcome } from '../protocol/tools';

/** What running one step's tool calls needs. */
export interface ToolCallsContext {
  readonly step: number;
  readonly tools: readonly ToolDescriptor[];
  readonly host: ToolHost;
  readonly signal: AbortSignal;
  readonly emit: (event: AgentEvent) => Promise<void>;
}

/** One finished call: the tool message for the model and whether it succeeded. */
export interface ToolCallResult {
  readonly message: Extract<ChatMessage, { role: 'tool' }>;
  readonly ok: boolean;
}

/**
 * Runs a step's tool calls concurrently and returns their tool messages in call order
 * (the order the model expects), whatever order they finish in. Every failure, from an
 * unknown name to a throwing tool, becomes a message the model can read and act on.
 */
export async function runToolCalls(
  calls: readonly ChatToolCall[],
  context: ToolCallsContext,
): Promise<ToolCallResult[]> {
  const offered = new Set(context.tools.map((tool) => tool.name));
  return Promise.all(calls.map((call) => runToolCall(call, offered, context)));
}

async function runToolCall(
  call: ChatToolCall,
  offered: ReadonlySet<string>,
  context: ToolCallsContext,
): Promise<ToolCallResult> {
  const started = performance.now();
  const toolName = call.function.name;
  const outcome = await settle(call, offered, context);
  const durationMs = performance.now() - started;
  const base = {
    type: 'tool-result',
    step: context.step,
    callId: call.id,
    toolName,
    durationMs,
  } as const;
  await context.emit(
    outcome.ok
      ? { ...base, ok: true, output: outcome.output }
      : { ...base, ok: false, error: outcome.error },
  );
  const content = outcome.ok ? outcome.content : JSON.stringify({ error: outcome.error });
  return { message: { role: 'tool', tool_call_id: call.id, content }, ok: outcome.ok };
}

async function settle(
  call: ChatToolCall,
  offered: ReadonlySet<string>,
  context: ToolCallsContext,
): Promise<ToolOutcome> {
  const toolName = call.function.name;
  if (!offered.has(toolName)) {
    const names = [...offered].join(', ') || 'none';
    return {
      ok: false,
      error: {
        code: 'tool-not-found',
        message: `There is no tool named "${toolName}". Available tools: ${names}.`,
      },
    };
  }
  const parsed = parseArguments(call.function.arguments);
  if (!parsed.ok) {
    return {
      ok: false,
      error: {
        code: 'tool-invalid-json',
        message: `The arguments for tool "${toolName}" are not valid JSON (${parsed.reason}). Send a JSON object.`,
      },
    };
  }
  const onAbort = () => {
    // Best effort: if the host is already gone there is nothing left to cancel.
    Promise.resolve(context.host.cancel(call.id)).catch(() => undefined);
  };
  context.signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await context.host.execute({ callId: call.id, toolName, arguments: parsed.value });
  } finally {
    context.signal.removeEventListener('abort', onAbort);
  }
}

/** Parses a call's argument text; an empty string means no arguments, as some servers send it. */
export function parseArguments(
  text: string,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
