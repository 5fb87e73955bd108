import { codeTool } from 'airlock-agents/code';
import { serveTools } from 'airlock-agents/sandbox';

serveTools([
  codeTool({
    name: 'run_js',
    description: 'Runs JavaScript.',
    tools: ['lookup'],
    limits: { timeoutMs: 10_000 },
    // Measured in the worker tier, as before the iframe tier became the code tool's default.
    isolation: 'worker',
  }),
]);
