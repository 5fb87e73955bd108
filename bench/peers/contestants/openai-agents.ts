// The OpenAI Agents SDK: a streamed run on the page thread, with the Chat Completions model
// over an `openai` client pointed at the fake server. Tracing is off (it would post spans).
import {
  Agent,
  OpenAIChatCompletionsModel,
  run as runAgent,
  setTracingDisabled,
  tool,
} from '@openai/agents';
// Resolved by the bench's Vite plugin to the `openai` copy @openai/agents depends on.
import OpenAI from 'openai';
import { z } from 'zod';
import type { PrepareContestant } from '../contestant';
import {
  INSTRUCTIONS,
  lookupAnswer,
  MAX_STEPS,
  MODEL,
  TOOL_DESCRIPTION,
  TOOL_NAME,
} from '../scenario';

/**
 * The client type @openai/agents was built against. `openai` here resolves (at build time,
 * through the bench's Vite plugin) to that same copy, but TypeScript sees Airlock's own.
 */
type AgentsOpenAI = ConstructorParameters<typeof OpenAIChatCompletionsModel>[0];

/** Creates the client, model and agent once; each run is one streamed `run`. */
export const prepare: PrepareContestant = async ({ baseURL }) => {
  setTracingDisabled(true);
  const client = new OpenAI({
    baseURL,
    apiKey: 'bench',
    dangerouslyAllowBrowser: true,
    maxRetries: 0,
  });
  const agent = new Agent({
    name: 'bench',
    instructions: INSTRUCTIONS,
    model: new OpenAIChatCompletionsModel(client as unknown as AgentsOpenAI, MODEL),
    tools: [
      tool({
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        parameters: z.object({ query: z.string() }),
        execute: async ({ query }) => lookupAnswer(query),
      }),
    ],
  });
  return {
    async run(input, { onText }) {
      const result = await runAgent(agent, input, { stream: true, maxTurns: MAX_STEPS });
      let toolCalls = 0;
      for await (const event of result) {
        if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') {
          onText(event.data.delta);
        } else if (event.type === 'run_item_stream_event' && event.name === 'tool_output') {
          toolCalls++;
        }
      }
      await result.completed;
      if (result.error) throw result.error;
      return {
        finalText: String(result.finalOutput ?? ''),
        toolCalls,
        steps: result.rawResponses.length,
      };
    },
    dispose: () => {},
  };
};
