// The hand-written `openai` loop on the page thread.
import OpenAI from 'openai';
import type { PrepareContestant } from '../contestant';
import { executeLookup, runChatLoop } from './chat-loop';

/** Creates the `openai` client once; each run is the loop on the page. */
export const prepare: PrepareContestant = async ({ baseURL }) => {
  const client = new OpenAI({
    baseURL,
    apiKey: 'bench',
    dangerouslyAllowBrowser: true,
    maxRetries: 0,
  });
  return {
    run: (input, { onText }) => runChatLoop({ client, input, onText, executeTool: executeLookup }),
    dispose: () => {},
  };
};
