// What the on-device (WebAssembly) model is sent and how its answer is read: the prompt made
// from the messages, the JSON envelope its answer is held to when tools are offered, and the
// reading of that envelope back into text and tool calls. No engine here, so it is tested in
// Node.
import { AirlockError } from '../errors/airlock-error';
import type { ChatMessage } from '../protocol/chat';
import type { ToolDescriptor } from '../protocol/tools';

/**
 * Turns a request's messages (and the tools it offers) into the model's prompt. The default,
 * {@link defaultWasmPrompt}, is a plain role-tagged transcript; a model trained on a template of
 * its own answers better in that one.
 */
export type WasmPromptFormat = (
  messages: readonly ChatMessage[],
  tools: readonly ToolDescriptor[],
) => string;

/**
 * The default prompt: every message as `<|role|>` on a line of its own and its text after
 * it, tools described in a system block first, and `<|assistant|>` last for the model to go on
 * from. Images and files of a user message are named, not sent (the engine reads text only).
 */
export const defaultWasmPrompt: WasmPromptFormat = (messages, tools) => {
  const blocks: string[] = [];
  if (tools.length > 0)
    blocks.push(
      `<|system|>\nAnswer with JSON: {"text": "..."} for an answer, or {"tool_calls": [{"name": ..., "arguments": {...}}]} to call tools. Tools:\n${tools
        .map(
          (tool) =>
            `- ${tool.name}: ${tool.description ?? ''} Arguments: ${JSON.stringify(tool.parameters ?? {})}`,
        )
        .join('\n')}`,
    );
  for (const message of messages) {
    if (message.role === 'user') blocks.push(`<|user|>\n${userText(message.content)}`);
    else if (message.role === 'system') blocks.push(`<|system|>\n${message.content}`);
    else if (message.role === 'tool')
      blocks.push(`<|tool|>\n${message.tool_call_id}: ${message.content}`);
    else {
      const calls = (message.tool_calls ?? []).map((call) => ({
        name: call.function.name,
        arguments: call.function.arguments,
      }));
      blocks.push(
        `<|assistant|>\n${calls.length > 0 ? JSON.stringify({ tool_calls: calls }) : (message.content ?? '')}`,
      );
    }
  }
  blocks.push('<|assistant|>\n');
  return blocks.join('\n');
};

function userText(content: Extract<ChatMessage, { role: 'user' }>['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) =>
      part.type === 'text'
        ? part.text
        : part.type === 'image'
          ? '[an image]'
          : `[${part.filename}]`,
    )
    .join('\n');
}

/**
 * The JSON schema the answer is held to when tools are offered (llama.cpp turns it into a
 * grammar, so the answer fits it whatever the weights): either `{"text": "…"}` or
 * `{"tool_calls": [{"name": <a tool's name>, "arguments": <that tool's parameters>}, …]}`.
 */
export function envelopeSchema(tools: readonly ToolDescriptor[]): Record<string, unknown> {
  const call = (tool: ToolDescriptor) => ({
    type: 'object',
    properties: {
      name: { const: tool.name },
      arguments: tool.parameters ?? { type: 'object' },
    },
    required: ['name', 'arguments'],
    additionalProperties: false,
  });
  return {
    oneOf: [
      {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: {
          tool_calls: {
            type: 'array',
            minItems: 1,
            items:
              tools.length === 1 ? call(tools[0] as ToolDescriptor) : { oneOf: tools.map(call) },
          },
        },
        required: ['tool_calls'],
        additionalProperties: false,
      },
    ],
  };
}

/** What an envelope said: a text, or tool calls with their arguments as JSON text. */
export type Envelope =
  | { readonly kind: 'text'; readonly text: string }
  | {
      readonly kind: 'tool-calls';
      readonly calls: readonly { readonly name: string; readonly arguments: string }[];
    };

/**
 * Reads a whole envelope. The grammar makes a malformed one impossible from llama.cpp; one
 * that is not (an engine or a grammar of the app's own that let something else through) is a
 * `model-stream-malformed`, never a guess.
 */
export function parseEnvelope(output: string, tools: readonly ToolDescriptor[]): Envelope {
  let value: unknown;
  try {
    value = JSON.parse(output);
  } catch {
    throw malformed('is not JSON', output);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw malformed('is not a JSON object', output);
  const record = value as Record<string, unknown>;
  if (typeof record.text === 'string' && !('tool_calls' in record))
    return { kind: 'text', text: record.text };
  const names = new Set(tools.map((tool) => tool.name));
  const calls = record.tool_calls;
  if (!Array.isArray(calls) || calls.length === 0 || 'text' in record)
    throw malformed('has neither a text nor tool calls', output);
  return {
    kind: 'tool-calls',
    calls: calls.map((call: unknown) => {
      const { name, arguments: args } = (call ?? {}) as Record<string, unknown>;
      if (typeof name !== 'string' || !names.has(name))
        throw malformed('calls a tool that was not offered', output);
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        throw malformed('has a tool call whose arguments are not an object', output);
      return { name, arguments: JSON.stringify(args) };
    }),
  };
}

function malformed(what: string, output: string): AirlockError {
  return new AirlockError(
    'model-stream-malformed',
    `The on-device model's answer ${what}: ${JSON.stringify(output.slice(0, 160))}.`,
    { details: { receivedChars: output.length } },
  );
}

/**
 * Streams the text of a `{"text": "…"}` envelope while it is being written: given the
 * output so far, the string's characters decoded up to the last whole one (an escape cut in
 * half waits for its end). `undefined` while the output is not (yet) a text envelope.
 */
export function envelopeTextSoFar(output: string): string | undefined {
  const start = /^\s*\{\s*"text"\s*:\s*"/.exec(output);
  if (!start) return undefined;
  let text = '';
  let at = start[0].length;
  while (at < output.length) {
    const char = output[at] as string;
    if (char === '"') break;
    if (char !== '\\') {
      text += char;
      at += 1;
      continue;
    }
    const escaped = /^\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/.exec(output.slice(at));
    if (!escaped) break; // cut in half: wait for the rest
    text += JSON.parse(`"${escaped[0]}"`) as string;
    at += escaped[0].length;
  }
  return text;
}
