import { type AgentEvent, type AgentOptions, createAgent, tool } from 'airlock-agents';
import { createRemoteSession, type ScriptedTurn } from 'airlock-agents/testing/remote';
import { z } from 'zod';
import { reportBench } from '../page-report';
import { type Summary, summarize } from '../stats';

// One tool call's latency in each place a tool can run, measured the same way (the agent
// worker's `durationMs` of each `tool-result`): a page tool, a sandboxed tool, and an MCP
// tool reached through the proxy's `/mcp/<name>` route (agent worker → proxy → MCP server).

const params = new URLSearchParams(location.search);
const modelServerUrl = params.get('model') ?? '';
const mcpUrl = params.get('mcp') ?? '';
const calls = params.has('smoke') ? 5 : 200;

const pageEcho = tool({
  name: 'echo',
  description: 'Returns its text.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

/** Runs `calls` sequential calls of `toolName` and returns their durations, the first left out (warm-up). */
async function callLatency(
  toolName: string,
  options: Partial<AgentOptions>,
  check: (output: unknown) => boolean,
): Promise<Summary> {
  const turns: ScriptedTurn[] = Array.from({ length: calls + 1 }, (_, i) => ({
    toolCalls: [{ name: toolName, arguments: { text: `call ${i}` } }],
  }));
  turns.push({ text: 'done' });
  const session = await createRemoteSession(modelServerUrl, turns);
  const agent = createAgent({
    worker: () =>
      new Worker(new URL('../sandbox/agent.worker.ts', import.meta.url), { type: 'module' }),
    model: { baseURL: session.baseURL, model: 'bench' },
    memory: { database: `bench-mcp-${crypto.randomUUID()}`, tools: false },
    limits: { maxSteps: turns.length + 1 },
    ...options,
  });
  try {
    await agent.ready;
    const events: AgentEvent[] = [];
    for await (const event of agent.run('bench')) events.push(event);
    const results = events.filter(
      (event): event is Extract<AgentEvent, { type: 'tool-result' }> =>
        event.type === 'tool-result',
    );
    const failed = results.find((event) => !event.ok || !check(event.output));
    if (failed) throw new Error(`A ${toolName} call failed: ${JSON.stringify(failed)}`);
    if (results.length !== calls + 1) throw new Error(`${toolName}: ${results.length} calls ran.`);
    return summarize(results.slice(1).map((event) => event.durationMs));
  } finally {
    agent.dispose();
  }
}

async function main(): Promise<unknown> {
  if (!mcpUrl) throw new Error('The page needs ?mcp=<the proxy route of the MCP server>.');
  const echoed = (output: unknown) => typeof output === 'string' && output.includes('call');
  return {
    callMs: {
      page: await callLatency('echo', { tools: [pageEcho] }, echoed),
      sandbox: await callLatency(
        'echo',
        {
          toolsets: [
            {
              name: 'bench',
              worker: () =>
                new Worker(new URL('../sandbox/tools.worker.ts', import.meta.url), {
                  type: 'module',
                }),
              poolSize: 1,
            },
          ],
        },
        echoed,
      ),
      mcpViaProxy: await callLatency(
        'notes__echo',
        { mcp: [{ name: 'notes', url: mcpUrl, approval: 'never' }] },
        echoed,
      ),
    },
  };
}

reportBench(main);
