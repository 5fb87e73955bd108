// The Vercel AI SDK: `streamText` with a tool and multi-step, on the page thread, through
// the OpenAI provider's Chat Completions model.
import { createOpenAI } from '@ai-sdk/openai';
import { stepCountIs, streamText, tool } from 'ai';
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

/** Creates the provider and the tool once; each run is one `streamText` call. */
export const prepare: PrepareContestant = async ({ baseURL }) => {
  const provider = createOpenAI({ baseURL, apiKey: 'bench' });
  const tools = {
    [TOOL_NAME]: tool({
      description: TOOL_DESCRIPTION,
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => lookupAnswer(query),
    }),
  };
  return {
    async run(input, { onText }) {
      const result = streamText({
        model: provider.chat(MODEL),
        system: INSTRUCTIONS,
        prompt: input,
        tools,
        stopWhen: stepCountIs(MAX_STEPS),
        maxRetries: 0,
      });
      let toolCalls = 0;
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') onText(part.text);
        else if (part.type === 'tool-result') toolCalls++;
        else if (part.type === 'error') throw part.error;
      }
      return { finalText: await result.text, toolCalls, steps: (await result.steps).length };
    },
    dispose: () => {},
  };
};
