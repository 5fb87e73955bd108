// The demo's code tool, in a worker of its own: QuickJS's WebAssembly loads here only.
import { codeTool } from 'airlock-agents/code';
import { serveTools } from 'airlock-agents/sandbox';

serveTools([
  codeTool({
    name: 'run_js',
    description:
      'Runs JavaScript to calculate and analyse data, e.g. statistics over several cities.',
    tools: ['get_weather'],
    limits: { timeoutMs: 5_000 },
  }),
]);
