// The tools one run may call: the agent's, Airlock's built-in ones (memory, knowledge search)
// and those the run brought, behind the agent's and the run's allowlists.

import { loadChunk } from '../../runtime/load-chunk';
import type { RunRecord } from '../../store/store';
import { LocalToolHost } from '../../tools/local-tool-host';
import { HostToolRunner } from '../tools/host-tool-runner';
import { knowledgeTools } from '../tools/knowledge-tools';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/run-tool-calls';
import type { ToolRegistry } from '../tools/tool-registry';
import type { KnowledgeUsed } from './run-knowledge';
import type { AgentSetup, RunAsks, RunChannel, RunScopes } from './run-setup';

/** The run's tools and which of them it may call. */
export interface RunTools {
  readonly registry: ToolRegistry;
  readonly allowed: (name: string) => boolean;
}

/**
 * The run's registry: the agent's tools, the built-in ones it was configured with (the
 * memory tools' module loaded when it has them) and the run's own, on the page.
 */
export async function runTools(
  setup: AgentSetup,
  run: RunRecord,
  channel: RunChannel,
  asks: RunAsks,
  scopes: RunScopes,
  knowledgeUsed: KnowledgeUsed,
): Promise<RunTools> {
  const { config, store } = setup;
  const { retrieval } = setup.knowledge.config;
  const memory = config.memory.tools
    ? await (setup.memoryTools ?? loadChunk('memory-tools', () => import('../tools/memory-tools')))
    : undefined;
  const builtIn = [
    ...(memory ? memory.memoryTools(store, { conversation: scopes[0], lasting: scopes[1] }) : []),
    ...(retrieval === 'tool' || retrieval === 'both'
      ? knowledgeTools(setup.knowledge, knowledgeUsed)
      : []),
  ];
  let registry = setup.registry.extended(
    builtIn.map((tool) => tool.spec),
    new HostToolRunner(new LocalToolHost(builtIn), 'built-in tools'),
    DEFAULT_TOOL_TIMEOUT_MS,
    'the built-in tools',
  );
  const runToolNames = new Set<string>();
  if (asks.tools?.length && channel.runTools) {
    registry = registry.extended(
      asks.tools,
      channel.runTools,
      DEFAULT_TOOL_TIMEOUT_MS,
      "the run's tools",
    );
    for (const spec of asks.tools) runToolNames.add(spec.name);
  }
  // The agent's allowlist was written for the agent's tools; a run's own tools answer
  // only to the run's allowlist.
  const agentAllows = allowlist(config.allowedTools);
  // The run's own allowlist is kept in its record, so a resume can never widen it.
  const runAllows = allowlist(run.allowedTools);
  const allowed = (name: string) =>
    runAllows(name) && (runToolNames.has(name) || agentAllows(name));
  return { registry, allowed };
}

function allowlist(names: readonly string[] | undefined): (name: string) => boolean {
  if (!names) return () => true;
  const allowed = new Set(names);
  return (name) => allowed.has(name);
}
