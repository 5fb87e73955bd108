import type { ChatMessage, ChatToolCall } from '../protocol/chat';
import type { ToolDescriptor } from '../protocol/tools';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';
import { ToolBlockParser } from './tool-block-parser';

/**
 * A `ChatModel` for OpenAI-compatible endpoints without function calling. The tools are
 * described in the system prompt, no `tools` field is sent, and calls are read from fenced
 * JSON blocks in the streamed answer into the same tool-call parts native calling
 * produces, so the loop, validation, events and errors are those of native calls.
 *
 * History is rewritten into roles such servers accept: an assistant's calls become its
 * blocks again, and tool results go back as one user message per step, because chat
 * templates without tool support reject or silently drop the `tool` role, and some
 * require user and assistant turns to alternate.
 */
export function withPromptedTools(model: ChatModel): ChatModel {
  return {
    name: model.name,
    async *stream(
      request: ModelRequest,
      options: ModelCallOptions,
    ): AsyncIterable<ModelStreamPart> {
      const parser = new ToolBlockParser();
      for await (const part of model.stream(promptedRequest(request), options)) {
        if (part.type === 'text-delta') {
          yield* parser.push(part.delta);
        } else if (part.type === 'finish') {
          // Everything has streamed: settle what the parser holds before saying why it ended.
          yield* parser.end();
          const calledTools = parser.callCount > 0 && part.finishReason === 'stop';
          yield calledTools ? { type: 'finish', finishReason: 'tool_calls' } : part;
        } else {
          // Native tool-call parts cannot come, since no tools were sent; usage passes through.
          yield part;
        }
      }
      yield* parser.end();
    },

    complete(request, options) {
      return model.complete(promptedRequest(request), options);
    },
  };
}

/** The request as a server without function calling takes it: tools in the prompt, no tool roles. */
export function promptedRequest(request: ModelRequest): ModelRequest {
  const messages: ChatMessage[] = [];
  let results: string[] | undefined;
  for (const message of request.messages) {
    if (message.role === 'tool') {
      // Consecutive results of one step go back as one user message.
      if (results) results.push(message.content);
      else {
        results = [message.content];
        messages.push({ role: 'user', content: '' });
      }
      messages[messages.length - 1] = { role: 'user', content: results.join('\n\n') };
      continue;
    }
    results = undefined;
    if (message.role === 'assistant' && message.tool_calls?.length) {
      const blocks = message.tool_calls.map(renderCall);
      messages.push({
        role: 'assistant',
        content: [message.content, ...blocks].filter(Boolean).join('\n\n'),
      });
    } else {
      messages.push(message);
    }
  }
  if (request.tools.length === 0) return { ...request, messages, tools: [] };
  const prompt = renderToolPrompt(request.tools);
  const [first, ...rest] = messages;
  const withPrompt: ChatMessage[] =
    first?.role === 'system'
      ? [{ role: 'system', content: `${first.content}\n\n${prompt}` }, ...rest]
      : [{ role: 'system', content: prompt }, ...messages];
  return { ...request, messages: withPrompt, tools: [] };
}

/** A call as the block the model would have written for it. */
function renderCall(call: ChatToolCall): string {
  let args: unknown;
  try {
    args = JSON.parse(call.function.arguments || '{}');
  } catch {
    // The model's block was not JSON: replay it as it was written.
    return `\`\`\`json\n${call.function.arguments}\n\`\`\``;
  }
  return `\`\`\`json\n${JSON.stringify({ tool: call.function.name, arguments: args })}\n\`\`\``;
}

/** The system prompt section describing the tools and how to call them. */
export function renderToolPrompt(tools: readonly ToolDescriptor[]): string {
  const described = tools.map(
    (tool) =>
      `## ${tool.name}\n${tool.description}\nArguments (JSON Schema): ${JSON.stringify(tool.parameters)}`,
  );
  return [
    '# Tools',
    'You can call the tools below. To call one, write a fenced JSON block naming the tool and giving its arguments:',
    '```json\n{"tool": "<tool name>", "arguments": {<arguments matching its schema>}}\n```',
    'To call several tools at once, write one block per call. After your blocks, stop: the results ' +
      'come back in the next user message, inside <tool_output> elements. When you have what you need, ' +
      'answer in plain text without any tool block.',
    ...described,
  ].join('\n\n');
}
