import { serveTools, tool } from 'airlock-agents/sandbox';
import { z } from 'zod';

serveTools([
  tool({
    name: 'echo',
    description: 'Returns its text.',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => text,
  }),
  tool({
    name: 'spin',
    description: 'Never returns and ignores its signal.',
    parameters: z.object({}),
    timeoutMs: 100,
    execute: () => {
      for (;;) {
        // Only terminating the worker ends this.
      }
    },
  }),
]);
