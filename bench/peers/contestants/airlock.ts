// Airlock: the loop in its worker, a page tool on the page thread, events to the page.
import { createAgent, tool } from 'airlock-agents';
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
 * Creates the agent (its worker, the page tool) once; each run is a new conversation, or
 * (`oneConversation`) the next turn of the same one.
 */
export const prepare: PrepareContestant = async ({
  baseURL,
  database,
  createWorker,
  oneConversation,
}) => {
  if (!createWorker) throw new Error('Airlock needs its agent worker.');
  const lookup = tool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: z.object({ query: z.string() }),
    execute: ({ query }) => lookupAnswer(query),
  });
  const agent = createAgent({
    worker: createWorker,
    model: { baseURL, model: MODEL },
    instructions: INSTRUCTIONS,
    tools: [lookup],
    limits: { maxSteps: MAX_STEPS },
    memory: { database, tools: false, summarize: false },
  });
  await agent.ready;
  const conversation = oneConversation ? crypto.randomUUID() : undefined;
  return {
    async run(input, { onText }) {
      // A new conversation per run, unless asked: then earlier runs are its history.
      const run = agent.run(input, { conversationId: conversation ?? crypto.randomUUID() });
      let toolCalls = 0;
      for await (const event of run) {
        if (event.type === 'text-delta') onText(event.delta);
        else if (event.type === 'tool-result' && event.ok) toolCalls++;
      }
      const result = await run.result;
      if (result.reason !== 'stop') throw new Error(`The run ended with ${result.reason}.`);
      return { finalText: result.text, toolCalls, steps: result.steps.length };
    },
    dispose: () => agent.dispose(),
  };
};
