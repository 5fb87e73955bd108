import type * as Comlink from 'comlink';
import { AirlockError, isAirlockError } from '../../errors/airlock-error';
import type { KnowledgeBase } from '../../knowledge/knowledge-base';
import type { ChatModel } from '../../model/chat-model';
import type { EmbeddingModel } from '../../model/embedding-model';
import type { TokenCalibration } from '../../model/estimate-tokens';
import {
  DEFAULT_NETWORK_WAIT_MS,
  type NetworkStatus,
  withNetworkWait,
} from '../../model/network-wait';
import { createOpenAIChatModel, createOpenAIEmbeddingModel } from '../../model/openai-chat-model';
import type { AgentConfig, ModelConfig } from '../../protocol/agent-config';
import type { GuardrailFlags, GuardrailHost } from '../../protocol/guardrails';
import { DEFAULT_KNOWLEDGE_CONFIG, type KnowledgeConfig } from '../../protocol/knowledge';
import type { SandboxSpawner } from '../../protocol/sandbox-wire';
import type { ToolHost } from '../../protocol/tools';
import { loadChunk } from '../../runtime/load-chunk';
import type { CompiledRule } from '../../store/learn-rules';
import { rowProblems } from '../../store/row-schemas';
import type { RunSeal } from '../../store/run-seal';
import type { ConversationStore } from '../../store/store';
import type { McpServerConnection } from '../mcp/mcp-server-connection';
import { type Guardrails, UNGUARDED } from '../policy/guardrails';
import { conversationLockName, heldLockNames } from '../run/conversation-lock';
import { markRunInterrupted } from '../run/interrupted-runs';
import type { RunRelays } from '../tabs/run-relay';
import { HostToolRunner } from '../tools/host-tool-runner';
import { SEARCH_KNOWLEDGE } from '../tools/knowledge-tools';
import { MEMORY_TOOL_NAMES } from '../tools/memory-tool-names';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/run-tool-calls';
import type { SandboxSupervisor } from '../tools/sandbox-supervisor';
import { ToolRegistry } from '../tools/tool-registry';

// What `configure` assembles before the agent's first run: its model and the wrappers
// around it, the knowledge base's embeddings, the tool registry, and the repair of runs a
// closed tab left `running`. The service owns the order; each piece is here.

/** What starting the tools left running, for the agent to end when it is disposed. */
export interface StartedTools {
  readonly supervisors: SandboxSupervisor[];
  mcp: readonly McpServerConnection[];
}

/**
 * The app's own model, checked, or the `openai` client at `model.baseURL`. The checks load
 * as a chunk: only an agent worker with a model of its own needs them.
 */
export async function chatModelFor(
  config: ModelConfig,
  customModel: ((config: ModelConfig) => ChatModel) | undefined,
): Promise<ChatModel> {
  if (customModel) {
    let model: ChatModel;
    try {
      model = customModel(config);
    } catch (error) {
      throw new AirlockError(
        'invalid-options',
        `The agent worker's own model could not be made: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const { checkedModel } = await loadChunk(
      'checked-model',
      () => import('../../model/checked-model'),
    );
    return checkedModel(model);
  }
  if (config.baseURL === undefined)
    throw new AirlockError(
      'invalid-options',
      '`model.baseURL` is required: the agent worker serves no model of its own (serveAgent({ model })).',
      { details: { field: 'model.baseURL' } },
    );
  return createOpenAIChatModel({ ...config, baseURL: config.baseURL });
}

/**
 * Registers every tool a run may be offered: the page's, each sandboxed toolset's (its
 * workers started and described), each MCP server's; then checks `allowedTools` names only
 * tools that exist. What it starts goes into `started` at once, so a failed start can end it.
 */
export async function startTools(
  config: AgentConfig,
  pageTools: Comlink.Remote<ToolHost>,
  sandboxes: Comlink.Remote<SandboxSpawner>,
  started: StartedTools,
): Promise<ToolRegistry> {
  const registry = new ToolRegistry();
  registry.add(
    config.pageTools,
    new HostToolRunner(pageTools, 'page tools'),
    DEFAULT_TOOL_TIMEOUT_MS,
    'the page tools',
  );
  if (config.toolsets.length > 0) {
    // Loaded here, so agents without toolsets never load the sandbox supervisor.
    const { SandboxSupervisor } = await loadChunk(
      'sandbox-supervisor',
      () => import('../tools/sandbox-supervisor'),
    );
    const toolsets = await Promise.all(
      config.toolsets.map(async (toolset) => {
        const supervisor = new SandboxSupervisor(toolset, sandboxes);
        started.supervisors.push(supervisor);
        return { toolset, supervisor, specs: await supervisor.start() };
      }),
    );
    for (const { toolset, supervisor, specs } of toolsets) {
      registry.add(specs, supervisor, toolset.timeoutMs, `toolset "${toolset.name}"`);
    }
  }
  if (config.mcp && config.mcp.length > 0) {
    // Loaded here, so agents without MCP servers never load the MCP SDK.
    const { connectMcpServers } = await loadChunk(
      'mcp-servers',
      () => import('../mcp/mcp-servers'),
    );
    started.mcp = await connectMcpServers(config.mcp, registry);
  }
  // After the MCP tools are in, so a code tool may be granted them too.
  await registry.describeCallableTools();
  for (const name of config.allowedTools ?? []) {
    const builtIn =
      (config.memory.tools && MEMORY_TOOL_NAMES.includes(name)) ||
      (name === SEARCH_KNOWLEDGE && offersKnowledgeTool(config));
    if (!registry.get(name) && !builtIn) {
      throw new AirlockError(
        'invalid-options',
        `allowedTools names "${name}", which no tool is called.`,
      );
    }
  }
  return registry;
}

/** Whether runs offer the `search_knowledge` tool. */
function offersKnowledgeTool(config: AgentConfig): boolean {
  const retrieval = config.knowledge?.retrieval ?? DEFAULT_KNOWLEDGE_CONFIG.retrieval;
  return retrieval === 'tool' || retrieval === 'both';
}

/**
 * The agent's model waiting for the network, behind the agent's rate limit (one limiter for all its runs), behind
 * prompted tool calling when the endpoint has no function calling (outermost, so the
 * limiter measures the prompt that is really sent).
 */
export async function wrapModel(
  chatModel: ChatModel,
  config: AgentConfig,
  tokens: TokenCalibration,
  network?: NetworkStatus,
): Promise<ChatModel> {
  // Innermost: a call's wait for the network is one call to the limiter, and no stream idles.
  let model = withNetworkWait(chatModel, {
    maxWaitMs: config.limits.networkWaitMs ?? DEFAULT_NETWORK_WAIT_MS,
    ...(network ? { network } : {}),
  });
  if (config.rateLimit) {
    // Loaded at start, and only for an agent with a rate limit of its own.
    const [{ withRateLimit }, { RateLimiter }] = await Promise.all([
      loadChunk('rate-limited-model', () => import('../../model/rate-limited-model')),
      loadChunk('rate-limiter', () => import('../../model/rate-limiter')),
    ]);
    model = withRateLimit(model, new RateLimiter(config.rateLimit), { tokens });
  }
  if (config.model.toolCalling === 'prompted') {
    // Loaded at start, and only for an endpoint without function calling.
    const { withPromptedTools } = await loadChunk(
      'prompted-tools',
      () => import('../../model/prompted-tools'),
    );
    model = withPromptedTools(model);
  }
  return model;
}

/**
 * The knowledge base's embeddings, from the `/embeddings` path of `model.baseURL`. Without
 * one (a model of the app's own), adding or searching documents fails `invalid-options`.
 */
export function embeddingModelFor(config: ModelConfig, knowledge: KnowledgeConfig): EmbeddingModel {
  const embedding = { model: knowledge.embeddingModel, dimensions: knowledge.dimensions };
  if (config.baseURL !== undefined)
    return createOpenAIEmbeddingModel({ ...config, baseURL: config.baseURL }, embedding);
  return {
    name: knowledge.embeddingModel,
    embed: () =>
      Promise.reject(
        new AirlockError(
          'invalid-options',
          'Knowledge needs embeddings from `model.baseURL` (its /embeddings path), and the agent has none.',
          { details: { field: 'model.baseURL' } },
        ),
      ),
  };
}

/**
 * Runs left `running` by a tab that is gone (its conversation's lock is free) are marked
 * interrupted, keeping the text they had streamed as an interrupted message; a WebMCP
 * caller's run left running or waiting for approval is settled as cancelled instead, since
 * its caller went with that tab (`orphaned-direct-call.ts`). Repair never
 * stops the agent from starting: a row that is not a valid run (another version or any
 * same-origin script wrote it) or whose conversation is gone is skipped, and so is one
 * whose repair fails; the others are still repaired.
 */
export async function markInterruptedRuns(
  store: ConversationStore,
  runSeal: Promise<RunSeal>,
  database: string,
): Promise<void> {
  const held = await heldLockNames();
  for (const row of await store.listRuns({ statuses: ['running', 'awaiting-approval'] })) {
    if (rowProblems('runs', row).length > 0) continue;
    const run = row;
    if (run.status !== 'running' && run.caller !== 'webmcp') continue;
    if (held.has(conversationLockName(database, run.conversationId))) continue;
    try {
      if (run.caller === 'webmcp') {
        const { settleOrphanedCall } = await loadChunk(
          'orphaned-direct-call',
          () => import('../run/orphaned-direct-call'),
        );
        await settleOrphanedCall(store, await runSeal, run);
      } else await markRunInterrupted(store, await runSeal, run);
    } catch (error) {
      // Only what belongs to one row is skipped; a store that fails as a whole fails start-up.
      if (!isAirlockError(error) || !['not-found', 'invalid-input'].includes(error.code))
        throw error;
    }
  }
}

/** The agent's learning rules, compiled; their chunk loads only for an agent that has rules. */
export async function compiledLearnRules(config: AgentConfig): Promise<CompiledRule[]> {
  const rules = config.memory.learn?.rules ?? [];
  if (rules.length === 0) return [];
  const { compileRules } = await loadChunk('learn-rules', () => import('../../store/learn-rules'));
  return compileRules(rules);
}

/** The seal every run puts on its row with the store's key, its key read ahead. */
export async function loadRunSeal(store: ConversationStore): Promise<RunSeal> {
  const { RunSeal } = await loadChunk('run-seal', () => import('../../store/run-seal'));
  const seal = new RunSeal(() => store.runSealKey());
  seal.prepare();
  return seal;
}

/**
 * The agent's knowledge base, in a chunk of its own: the worker starts without it, and its
 * first use loads the index chunk anyway.
 */
export async function loadKnowledgeBase(
  store: ConversationStore,
  config: AgentConfig,
): Promise<KnowledgeBase> {
  const knowledge = config.knowledge ?? DEFAULT_KNOWLEDGE_CONFIG;
  const { KnowledgeBase } = await loadChunk(
    'knowledge-base',
    () => import('../../knowledge/knowledge-base'),
  );
  return new KnowledgeBase(store, embeddingModelFor(config.model, knowledge), knowledge);
}

/** The relays of this agent's runs to other tabs, through the app's tab hub when it has one. */
export async function loadRunRelays(database: string, tabHub?: MessagePort): Promise<RunRelays> {
  const { RunRelays } = await loadChunk('run-relay', () => import('../tabs/run-relay'));
  return new RunRelays(database, tabHub);
}

/**
 * The agent worker's side of the page's guardrails: the gate that asks the page (and parses
 * its verdicts) loads as a chunk, at start, only when the page has a guardrail.
 */
export async function guardrailsFor(
  host: Comlink.Remote<GuardrailHost>,
  flags: GuardrailFlags,
): Promise<Guardrails> {
  if (!flags.input && !flags.output && !flags.toolArguments) return UNGUARDED;
  const { GuardrailGate } = await loadChunk(
    'guardrail-gate',
    () => import('../policy/guardrail-gate'),
  );
  return new GuardrailGate(host, flags);
}
