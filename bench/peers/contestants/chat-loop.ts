// The hand-written loop: stream a completion with the `openai` package, collect tool
// calls, run them, send the results back, repeat. The floor any agent library adds to.
import type OpenAI from 'openai';
import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { RunOutcome } from '../contestant';
import {
  INSTRUCTIONS,
  lookupAnswer,
  MAX_STEPS,
  MODEL,
  TOOL_DESCRIPTION,
  TOOL_NAME,
} from '../scenario';

/** The scenario's tool, as JSON Schema for the API. */
const TOOLS: ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: TOOL_NAME,
      description: TOOL_DESCRIPTION,
      parameters: {
        type: 'object',
        properties: { query: { type: 'string' } },
        required: ['query'],
        additionalProperties: false,
      },
    },
  },
];

/** What the loop needs from where it runs. */
export interface ChatLoopOptions {
  readonly client: OpenAI;
  readonly input: string;
  readonly onText: (delta: string) => void;
  /** Runs a tool call; the result goes back to the model as JSON. */
  readonly executeTool: (name: string, args: unknown) => Promise<unknown>;
}

/** Runs the scenario's conversation to its final answer. */
export async function runChatLoop(options: ChatLoopOptions): Promise<RunOutcome> {
  const { client, onText, executeTool } = options;
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: options.input },
  ];
  let toolCalls = 0;
  for (let step = 1; step <= MAX_STEPS; step++) {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      tools: TOOLS,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const calls: { id: string; name: string; arguments: string }[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        text += delta.content;
        onText(delta.content);
      }
      for (const part of delta.tool_calls ?? []) {
        calls[part.index] ??= { id: '', name: '', arguments: '' };
        const call = calls[part.index]!;
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
    }
    if (calls.length === 0) return { finalText: text, toolCalls, steps: step };
    messages.push({
      role: 'assistant',
      content: text,
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      })),
    });
    for (const call of calls) {
      const output = await executeTool(call.name, JSON.parse(call.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(output) });
      toolCalls++;
    }
  }
  throw new Error(`No final answer within ${MAX_STEPS} steps.`);
}

/** The page-side tool both raw contestants run. */
export async function executeLookup(name: string, args: unknown): Promise<unknown> {
  if (name !== TOOL_NAME) throw new Error(`Unknown tool ${name}.`);
  return lookupAnswer(String((args as { query?: unknown }).query));
}
