import type { ChatMessage } from '../protocol/chat';

/** Characters per token assumed by the rough estimate; close enough for English text and JSON. */
const CHARS_PER_TOKEN = 4;

/**
 * What an image or a file part is counted as: a high-detail 1024×1024 image is 765
 * tokens to OpenAI's models, a page of a PDF more; a fixed round figure keeps windowing
 * simple without reading the attachment.
 */
export const ATTACHMENT_TOKENS = 1_000;

/**
 * A rough token count of a message: its content plus the names and arguments of its
 * tool calls, at four characters a token. Stored with each message so that choosing the
 * history window never re-measures the history.
 */
export function approxTokens(message: ChatMessage): number {
  if (typeof message.content === 'object' && message.content !== null) {
    let tokens = 0;
    for (const part of message.content)
      tokens +=
        part.type === 'text' ? Math.ceil(part.text.length / CHARS_PER_TOKEN) : ATTACHMENT_TOKENS;
    return tokens;
  }
  let chars = message.content?.length ?? 0;
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      chars += call.function.name.length + call.function.arguments.length;
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
