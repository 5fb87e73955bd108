/** Requests as Airlock's agent worker sends them to the offline model, for its tests. */
import type { ToolErrorCode } from 'airlock-agents';
import type { RecordedRequest, ScriptedReply, ScriptedTurn } from 'airlock-agents/testing';
import { offlineModel } from '../../../demo/model/offline-model';
import { formatToolOutput } from '../../../src/worker/tools/tool-message';

/** Every tool the demo agent offers. */
export const DEMO_TOOLS = [
  'get_weather',
  'calculate',
  'slow_report',
  'fetch_headline',
  'set_theme',
  'save_memory',
  'recall_memories',
  'forget_memory',
];

/** A Chat Completions request as the agent worker sends it, recorded by the handler. */
export function requestWith(
  messages: readonly unknown[],
  toolNames: readonly string[] = DEMO_TOOLS,
  receivedAt = 0,
): RecordedRequest {
  return {
    method: 'POST',
    path: '/llm/v1/chat/completions',
    headers: {},
    body: {
      model: 'airlock-offline',
      stream: true,
      messages,
      ...(toolNames.length === 0
        ? {}
        : {
            tools: toolNames.map((name) => ({
              type: 'function',
              function: { name, parameters: { type: 'object' } },
            })),
          }),
    },
    receivedAt,
    turnIndex: 0,
    closedByClient: false,
  };
}

/** The model's reply to one user message. */
export function ask(
  question: string,
  toolNames: readonly string[] = DEMO_TOOLS,
  turnIndex = 0,
): ScriptedReply {
  const request = requestWith(
    [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: question },
    ],
    toolNames,
  );
  return asReply(offlineModel(request, turnIndex));
}

/** The model's text after one call of `toolName` with `args` came back with `content` (a tool message). */
export function answerAfter(
  toolName: string,
  args: Record<string, unknown>,
  toolMessage: { role: 'tool'; tool_call_id: string; content: string },
): string | undefined {
  const request = requestWith([
    { role: 'user', content: '(the question)' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: toolMessage.tool_call_id,
          type: 'function',
          function: { name: toolName, arguments: JSON.stringify(args) },
        },
      ],
    },
    toolMessage,
  ]);
  return asReply(offlineModel(request, 1)).text;
}

/** A tool message as Airlock's agent worker writes it: the output inside a labelled element. */
export function okToolMessage(toolName: string, callId: string, output: unknown) {
  const content = JSON.stringify(output);
  return {
    role: 'tool' as const,
    tool_call_id: callId,
    content: formatToolOutput(toolName, callId, { ok: true, output, content }),
  };
}

/** A failed call's tool message, as Airlock writes it. */
export function errorToolMessage(
  toolName: string,
  callId: string,
  code: ToolErrorCode,
  message: string,
) {
  return {
    role: 'tool' as const,
    tool_call_id: callId,
    content: formatToolOutput(toolName, callId, { ok: false, error: { code, message } }),
  };
}

/** `turn` as a reply; an HTTP error fails the test. */
export function asReply(turn: ScriptedTurn): ScriptedReply {
  if ('status' in turn) throw new Error(`Expected a reply, got HTTP ${turn.status}`);
  return turn;
}
