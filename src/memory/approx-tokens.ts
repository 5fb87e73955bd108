import type { ChatMessage } from '../protocol/chat';

/** Characters per token assumed by the rough estimate; close enough for English text and JSON. */
const CHARS_PER_TOKEN = 4;

/**
 * A rough token count of a message: its content plus the names and arguments of its
 * tool calls, at four characters a token. Stored with each message so that choosing the
 * history window never re-measures the history.
 */
export function approxTokens(message: ChatMessage): number {
  let chars = message.content?.length ?? 0;
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      chars += call.function.name.length + call.function.arguments.length;
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
