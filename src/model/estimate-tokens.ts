import type { ModelRequest } from './chat-model';

/** Characters per token assumed when a server reports no usage; close enough for English and JSON. */
const CHARS_PER_TOKEN = 4;

/** A rough token count of some text, at four characters a token. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * What an image or file sent as a data URL counts as: models bill images by their pixels,
 * not their bytes, so base64 is not counted as text (a 1 MB photo is not 330 000 tokens).
 */
const ATTACHMENT_TOKENS = 1_000;

/**
 * A rough count of the prompt tokens of a request: its messages and tool definitions as
 * JSON, each attachment's data URL counted as `ATTACHMENT_TOKENS`.
 */
export function estimateRequestTokens(request: ModelRequest): number {
  const tools = request.tools.length > 0 ? JSON.stringify(request.tools).length : 0;
  let attachments = 0;
  const text = JSON.stringify(request.messages, (_key, value: unknown) => {
    if (typeof value !== 'string' || !value.startsWith('data:')) return value;
    attachments++;
    return '';
  });
  return estimateTokens(text.length + tools) + attachments * ATTACHMENT_TOKENS;
}
