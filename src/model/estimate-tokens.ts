import type { ModelRequest } from './chat-model';

/** Characters per token assumed when a server reports no usage; close enough for English and JSON. */
const CHARS_PER_TOKEN = 4;

/** A rough token count of some text, at four characters a token. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** A rough count of the prompt tokens of a request: its messages and tool definitions as JSON. */
export function estimateRequestTokens(request: ModelRequest): number {
  const tools = request.tools.length > 0 ? JSON.stringify(request.tools).length : 0;
  return estimateTokens(JSON.stringify(request.messages).length + tools);
}
