import { createAgent, tool } from 'airlock-agents';
import { AirlockChatTransport } from 'airlock-agents/ai-sdk';
import { z } from 'zod';

// Page tools run on the main thread; a sandboxed toolset works the same way (docs/tools.md).
const getWeather = tool({
  name: 'get_weather',
  description: 'The weather forecast for a city.',
  parameters: z.object({ city: z.string().describe('The city, e.g. Paris') }),
  execute: ({ city }) => ({ city, forecast: 'sunny', celsius: 21 }),
});

const deleteNote = tool({
  name: 'delete_note',
  description: "Deletes one of the user's notes.",
  parameters: z.object({ id: z.string() }),
  // The call waits for the user: the chat shows Approve and Decline.
  needsApproval: true,
  execute: ({ id }) => ({ deleted: id }),
});

export const agent = createAgent({
  worker: () => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' }),
  model: { baseURL: '/llm/v1', model: 'gpt-4o-mini' },
  instructions: 'You are a helpful assistant. Use the tools when they help.',
  tools: [getWeather, deleteNote],
});

export const transport = new AirlockChatTransport({ agent });

/** The conversation this page shows: the same one after every reload. */
export const CHAT_ID = 'react-chat';
