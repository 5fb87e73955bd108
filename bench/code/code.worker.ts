import { codeTool } from 'airlock-agents/code';
import { serveTools } from 'airlock-agents/sandbox';

serveTools([
  codeTool({
    name: 'run_js',
    description: 'Runs JavaScript.',
    tools: ['lookup'],
    limits: { timeoutMs: 10_000 },
  }),
]);
