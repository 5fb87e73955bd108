import type * as Comlink from 'comlink';
import { releaseProxy } from 'comlink';
import { AirlockError, isAirlockError, toErrorData } from '../../errors/airlock-error';
import { KnowledgeBase } from '../../knowledge/knowledge-base';
import { assertInputFits } from '../../memory/context-window';
import { DEFAULT_OPEN_TIMEOUT_MS, openStore } from '../../memory/dexie-store';
import { rowProblems } from '../../memory/row-schemas';
import type { RunSeal } from '../../memory/run-seal';
import type { ConversationStore, RunRecord } from '../../memory/store';
import type { ChatModel } from '../../model/chat-model';
import { checkedModel } from '../../model/checked-model';
import type { EmbeddingModel } from '../../model/embedding-model';
import { TokenCalibration } from '../../model/estimate-tokens';
import { DEFAULT_NETWORK_WAIT_MS, withNetworkWait } from '../../model/network-wait';
import { createOpenAIChatModel, createOpenAIEmbeddingModel } from '../../model/openai-chat-model';
import { withRateLimit } from '../../model/rate-limited-model';
import { RateLimiter } from '../../model/rate-limiter';
import type { AgentEvent } from '../../protocol/events';
import type { GuardrailHost } from '../../protocol/guardrails';
import { DEFAULT_KNOWLEDGE_CONFIG, type KnowledgeConfig } from '../../protocol/knowledge';
import type { SandboxSpawner } from '../../protocol/sandbox-wire';
import { relayChannelName } from '../../protocol/tab-relay';
import type { ToolHost } from '../../protocol/tools';
import {
  type AgentConfig,
  type AgentWorkerApi,
  type ConfigureResult,
  KNOWLEDGE_METHODS,
  type KnowledgeApi,
  MEMORY_METHODS,
  type MemoryWire,
  type ModelConfig,
  type ResumeRequest,
  type RunRequest,
} from '../../protocol/wire';
import { lazyMethods } from '../../runtime/lazy-methods';
import { settledLater } from '../../runtime/settled-later';
import { ContextCache } from '../context/context-cache';
import type { McpServerConnection } from '../mcp/mcp-server-connection';
import { GUARDRAIL_ABORTED, GuardrailGate, guardrailBlocked } from '../policy/guardrail-gate';
import { conversationLockName, heldLockNames } from '../run/conversation-lock';
import { runConversation } from '../run/conversation-run';
import { EventSink } from '../run/event-sink';
import { markRunInterrupted } from '../run/interrupted-runs';
import { abortedRun } from '../run/run-agent';
import { readRunInput, withText } from '../run/run-input';
import { type AgentSetup, assertAsksHold, lastingScopes, type RunChannel } from '../run/run-setup';
import type { ConversationWatch } from '../tabs/conversation-watch';
import { DeferredRelay } from '../tabs/deferred-relay';
import type { RunRelay, RunRelays } from '../tabs/run-relay';
import { ApprovalGate } from '../tools/approval-gate';
import { HostToolRunner } from '../tools/host-tool-runner';
import { SEARCH_KNOWLEDGE } from '../tools/knowledge-tools';
import { MEMORY_TOOL_NAMES } from '../tools/memory-tool-names';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/run-tool-calls';
import type { SandboxSupervisor } from '../tools/sandbox-supervisor';
import { ToolRegistry } from '../tools/tool-registry';
import { parseAgentConfig } from './config-schema';
import {
  apiSchemas,
  claimedRunId,
  parseArgument,
  parseResumeRequest,
  parseRunRequest,
} from './request-schema';

/** Options of `serveAgent`, for tests and custom storage. */
export interface AgentServiceOptions {
  /**
   * Opens the store for a database name (default: IndexedDB through Dexie). A store whose
   * first call fails with `storage-unavailable` is replaced by one in memory.
   */
  readonly openStore?: (
    database: string,
    options: { readonly openTimeoutMs: number },
  ) => ConversationStore;
  /**
   * A model of the app's own instead of the `openai` client: an in-browser engine or another
   * provider. Called once when the agent is configured, with the page's model settings (the
   * page's `model.baseURL` may then be left out). Airlock's rate limit and prompted tool
   * calling wrap it as they wrap the built-in one; what it streams is checked.
   */
  readonly model?: (config: ModelConfig) => ChatModel;
}

/** A run this worker serves, so deleting its conversation can end it first. */
interface ServedRun {
  /** Known once the run (or the resumed run's row) names it. */
  conversationId?: string;
  readonly controller: AbortController;
  readonly ended: Promise<void>;
  /** Set for a run that ends before it takes the conversation's lock: no other tab hears of it. */
  unrelayed?: true;
}

/** How long deleting a conversation waits for its runs to end before deleting anyway. */
const DELETE_WAIT_MS = 5_000;

/** How often expired memories are pruned while the agent lives. */
const PRUNE_INTERVAL_MS = 10 * 60_000;

/**
 * The agent worker's side of the seam. Configured once (model, store, page tools,
 * sandboxed toolsets), then one run at a time per conversation across tabs: each run
 * takes the conversation's Web Lock, builds its context from the store, and writes
 * every completed step back before the next model call.
 */
export class AgentService implements AgentWorkerApi {
  readonly memory: MemoryWire;
  readonly knowledge: KnowledgeApi;
  readonly #openStore: NonNullable<AgentServiceOptions['openStore']>;
  readonly #customModel: AgentServiceOptions['model'];
  readonly #supervisors: SandboxSupervisor[] = [];
  /** The MCP servers' connections, ended with the agent. */
  #mcp: readonly McpServerConnection[] = [];
  readonly #setup: Promise<AgentSetup>;
  readonly #served = new Set<ServedRun>();
  /** The watches of this worker's page, closed with the agent. */
  readonly #watches = new Set<ConversationWatch>();
  /**
   * The relays of the agent's runs and the channels its watches open, on the app's tab hub
   * (every tab of the origin) or on a hub of this worker's own (this agent's watches only).
   * Made when the agent is configured (their code loads then: no run opens a relay before
   * the agent is ready); undefined without Web Locks (very old engines), where runs are not
   * watchable. A failed load fails the runs and watches that await it, not the start.
   */
  #relays: Promise<RunRelays> | undefined;
  /** Set when IndexedDB could not be opened and the agent keeps its data in memory. */
  #storageWarning: string | undefined;
  /** The store, from the moment configure opens it, so `close` can close it even mid-start. */
  #store: ConversationStore | undefined;
  #pruning: ReturnType<typeof setInterval> | undefined;
  #resolveSetup!: (setup: AgentSetup) => void;
  #rejectSetup!: (error: unknown) => void;

  constructor(options: AgentServiceOptions = {}) {
    this.#openStore =
      options.openStore ?? ((name, { openTimeoutMs }) => openStore({ name, openTimeoutMs }));
    this.#customModel = options.model;
    this.#setup = new Promise((resolve, reject) => {
      this.#resolveSetup = resolve;
      this.#rejectSetup = reject;
    });
    // Nobody may be waiting yet; the failure is also returned by configure and seen by every run.
    this.#setup.catch(() => undefined);
    // Loaded on their first call: a page that never reads its memory or knowledge never
    // loads their code.
    this.memory = lazyMethods(MEMORY_METHODS, async () => {
      const { MemoryService } = await import('./memory-api');
      return new MemoryService(
        async () => (await this.#setup).store,
        (conversationId) => this.#endRunsOf(conversationId),
      );
    });
    this.knowledge = lazyMethods(KNOWLEDGE_METHODS, async () => {
      const { KnowledgeService } = await import('./knowledge-api');
      return new KnowledgeService(async () => (await this.#setup).knowledge);
    });
  }

  async configure(
    value: AgentConfig,
    pageTools: Comlink.Remote<ToolHost>,
    sandboxes: Comlink.Remote<SandboxSpawner>,
    guardrails: Comlink.Remote<GuardrailHost>,
    tabHub?: MessagePort,
  ): Promise<ConfigureResult> {
    try {
      const config = parseAgentConfig(value);
      const chatModel = this.#chatModel(config.model);
      // Loaded only for an agent that has rules: most agents do not learn.
      const rules = config.memory.learn?.rules ?? [];
      const learnRules =
        rules.length > 0 ? (await import('../../memory/learn-rules')).compileRules(rules) : [];
      if (typeof navigator !== 'undefined' && navigator.locks) {
        const { database } = config.memory;
        this.#relays = settledLater(
          import('../tabs/run-relay').then(({ RunRelays }) => new RunRelays(database, tabHub)),
        );
      }
      const store = await this.#startStore(config);
      // Every run seals its row with the store's key: loaded while the tools start.
      const runSeal = settledLater(
        import('../../memory/run-seal').then(({ RunSeal }) => {
          const seal = new RunSeal(() => store.runSealKey());
          seal.prepare();
          return seal;
        }),
      );
      await markInterruptedRuns(store, runSeal, config.memory.database);
      const registry = await this.#startTools(config, pageTools, sandboxes);
      const knowledge = config.knowledge ?? DEFAULT_KNOWLEDGE_CONFIG;
      const tokens = new TokenCalibration();
      this.#resolveSetup({
        config,
        model: await wrapModel(chatModel, config, tokens),
        tokens,
        registry,
        store,
        runSeal: await runSeal,
        knowledge: new KnowledgeBase(store, embeddingModelFor(config.model, knowledge), knowledge),
        guardrails: new GuardrailGate(guardrails, config.guardrails),
        learnRules,
        // Loaded now, off the first run's path: an agent without them never loads them.
        ...(config.memory.tools
          ? { memoryTools: settledLater(import('../tools/memory-tools')) }
          : {}),
        // Kept only where other tabs' changes can be heard (`BroadcastChannel`).
        ...(typeof BroadcastChannel === 'function'
          ? {
              contexts: new ContextCache(
                store,
                config.memory.window.maxMessages + 1,
                lastingScopes(config),
              ),
            }
          : {}),
      });
      // Lives as long as this worker, which ends with the agent. A failed prune is retried
      // at the next interval; runs never depend on it.
      this.#pruning = setInterval(
        () => store.pruneExpired().catch(() => undefined),
        PRUNE_INTERVAL_MS,
      );
      return {
        ok: true,
        tools: registry.names,
        storage: { backend: this.#storageWarning === undefined ? 'indexeddb' : 'memory' },
      };
    } catch (error) {
      for (const supervisor of this.#supervisors.splice(0)) supervisor.dispose();
      await this.#closeMcp();
      this.#rejectSetup(error);
      return { ok: false, error: toErrorData(error) };
    }
  }

  /** The app's own model, checked, or the `openai` client at `model.baseURL`. */
  #chatModel(config: ModelConfig): ChatModel {
    if (this.#customModel) {
      let model: ChatModel;
      try {
        model = this.#customModel(config);
      } catch (error) {
        throw new AirlockError(
          'invalid-options',
          `The agent worker's own model could not be made: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
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
   * Opens the agent's store and prunes expired memories (its first call, so an open that is
   * blocked fails here, with `storage-blocked`). When IndexedDB cannot be opened at all the
   * agent runs on memory, and every run says so with a `storage-unavailable` warning.
   */
  async #startStore(config: AgentConfig): Promise<ConversationStore> {
    const { database, openTimeoutMs = DEFAULT_OPEN_TIMEOUT_MS } = config.memory;
    const store = this.#openStore(database, { openTimeoutMs });
    this.#store = store;
    try {
      await store.pruneExpired();
      return store;
    } catch (error) {
      if (!isAirlockError(error) || error.code !== 'storage-unavailable') throw error;
      await store.close();
      this.#storageWarning = `IndexedDB cannot be opened (${error.message}); conversations and memories are kept in memory and lost when the agent is disposed.`;
      // Named as the database, so the page's subscribers still hear of its changes. Loaded
      // here: only an agent without IndexedDB needs it.
      const { createMemoryStore } = await import('../../memory/memory-store');
      this.#store = createMemoryStore({ name: database });
      return this.#store;
    }
  }

  /**
   * Closes the agent's store, ends the runs, and resolves once none of the store's
   * transactions is in flight. The page calls it on dispose before terminating this worker:
   * WebKit leaves a database whose connection was ended mid-commit unusable for every later
   * connection. The store closes first, so the ended runs store nothing more: their rows
   * stay as a terminated worker leaves them (a run waiting for approval stays resumable).
   */
  async close(): Promise<void> {
    clearInterval(this.#pruning);
    const closing = this.#store?.close();
    const reason = new AirlockError('agent-disposed', 'The agent was disposed.');
    for (const run of this.#served) run.controller.abort(reason);
    for (const watch of this.#watches) watch.close();
    // A relay whose code never loaded has nothing to let go of.
    this.#relays?.then(
      (relays) => relays.close(),
      () => undefined,
    );
    await Promise.all([closing, this.#closeMcp()]);
  }

  /** Ends the MCP sessions (each within a second), so servers need not wait for them to expire. */
  async #closeMcp(): Promise<void> {
    const connections = this.#mcp;
    this.#mcp = [];
    await Promise.all(connections.map((connection) => connection.close()));
  }

  /**
   * Ends this worker's runs of a conversation (with `conversation-deleted`) and waits for
   * them to finish their last writes, so that none lands after the deletion.
   */
  async #endRunsOf(conversationId: string): Promise<void> {
    const ending = [...this.#served].filter((run) => run.conversationId === conversationId);
    const reason = new AirlockError(
      'conversation-deleted',
      `The conversation "${conversationId}" was deleted while the run was going on.`,
      { details: { conversationId } },
    );
    for (const run of ending) run.controller.abort(reason);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        Promise.all(ending.map((run) => run.ended)),
        new Promise((resolve) => {
          timer = setTimeout(resolve, DELETE_WAIT_MS);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  run(
    untrusted: RunRequest,
    port: MessagePort,
    runTools?: Comlink.Remote<ToolHost>,
  ): Promise<void> {
    return this.#serve(port, claimedRunId(untrusted), runTools, async (setup, channel, served) => {
      const { emit, signal } = channel;
      const request = parseRunRequest(untrusted, setup.config.limits.maxInputChars);
      served.conversationId = request.conversationId;
      // Sizes, types and hashes, before anything is stored or sent: a refused input stores nothing.
      const read = await readRunInput(request.input, setup.config.limits);
      // Before anything is stored or sent: a blocked input leaves no trace, a rewritten one replaces it.
      const guarded = await setup.guardrails.input(
        read.text,
        { runId: request.runId, conversationId: request.conversationId },
        signal,
      );
      if (guarded === GUARDRAIL_ABORTED) {
        served.unrelayed = true;
        await emit({
          type: 'run-start',
          runId: request.runId,
          model: request.model ?? setup.model.name,
        });
        await emit({
          type: 'run-finish',
          ...abortedRun(request.runId, request.conversationId),
        });
        return;
      }
      if (guarded.action === 'block') throw guardrailBlocked('input', guarded);
      assertAsksHold(setup, request, channel);
      const input =
        guarded.value === read.text ? read.message : withText(read.message, guarded.value);
      // Measured as it will be sent (a guardrail may have rewritten it), before it is stored.
      assertInputFits(input, setup.config.memory.window, setup.tokens);
      const now = Date.now();
      const run: RunRecord = {
        id: request.runId,
        conversationId: request.conversationId,
        status: 'running',
        input: guarded.value,
        step: 1,
        partialText: '',
        ...(request.allowedTools === undefined ? {} : { allowedTools: request.allowedTools }),
        startedAt: now,
        updatedAt: now,
      };
      await runConversation(
        setup,
        run,
        { input, attachments: read.attachments, title: titleFrom(guarded.value) },
        channel,
        request,
      );
    });
  }

  resume(
    untrusted: ResumeRequest,
    port: MessagePort,
    runTools?: Comlink.Remote<ToolHost>,
  ): Promise<void> {
    return this.#serve(port, claimedRunId(untrusted), runTools, async (setup, channel, served) => {
      const request = parseResumeRequest(untrusted);
      // Loaded on the first resume: most runs are never resumed.
      const { planResume } = await import('../run/resume-plan');
      const { run, start } = await planResume(
        setup.store,
        setup.runSeal,
        request.runId,
        request.allowedTools,
      );
      served.conversationId = run.conversationId;
      assertAsksHold(setup, request, channel);
      await runConversation(setup, run, start, channel, request);
    });
  }

  /** Sets up the run's port and reports any failure on it as `run-error`. */
  async #serve(
    port: MessagePort,
    runId: string,
    runTools: Comlink.Remote<ToolHost> | undefined,
    body: (setup: AgentSetup, channel: RunChannel, served: ServedRun) => Promise<void>,
  ): Promise<void> {
    const controller = new AbortController();
    const approvals = new ApprovalGate();
    let markEnded: () => void = () => {};
    const served: ServedRun = {
      controller,
      ended: new Promise((resolve) => {
        markEnded = resolve;
      }),
    };
    this.#served.add(served);
    const sink = new EventSink(port, {
      onCancel: () => controller.abort(),
      onApproval: (approvalId, decision) => approvals.decide(approvalId, decision),
    });
    // Told after `run-start`: what the agent lives with, as the run starts.
    const startWarnings = this.#startWarnings();
    let relay: DeferredRelay | undefined;
    const send = async (event: AgentEvent) => {
      await sink.emit(event);
      // A promise only while the relay opens: an event of an open relay is not awaited.
      const opening = relay?.publish(event);
      if (opening) await opening;
    };
    const emit = async (event: AgentEvent) => {
      // `run-start` is emitted under the conversation's lock: from then on, other tabs can hear
      // the run, once its relay opens.
      if (event.type === 'run-start' && served.conversationId !== undefined && !served.unrelayed) {
        const { conversationId } = served;
        relay = new DeferredRelay(() =>
          this.#openRelay(conversationId, event.runId, controller, approvals),
        );
      }
      await send(event);
      if (event.type === 'run-start') for (const warning of startWarnings) await send(warning);
    };
    try {
      const channel: RunChannel = {
        emit,
        signal: controller.signal,
        approvals,
        checkOutput: (value) => sink.checkOutput(value),
        ...(runTools ? { runTools: new HostToolRunner(runTools, "the run's tools") } : {}),
      };
      await body(await this.#setup, channel, served);
    } catch (error) {
      // A run ended by the deletion of its conversation says so, whatever it was doing.
      const reason = controller.signal.reason;
      const cause = isConversationDeleted(reason) ? reason : error;
      await emit({ type: 'run-error', runId, error: toErrorData(cause) });
    } finally {
      this.#served.delete(served);
      markEnded();
      sink.close();
      relay?.close();
      // The page's end of the run's tool host closes with it.
      if (typeof runTools?.[releaseProxy] === 'function') runTools[releaseProxy]();
    }
  }

  /**
   * The warnings every run starts with: the agent keeps its data in memory
   * (`storage-unavailable`); an MCP server's listed tools are not all offered (`mcp-tools-dropped`).
   */
  #startWarnings(): AgentEvent[] {
    const warnings: AgentEvent[] = [];
    if (this.#storageWarning !== undefined) {
      warnings.push({
        type: 'warning',
        code: 'storage-unavailable',
        message: this.#storageWarning,
      });
    }
    for (const connection of this.#mcp) {
      const dropped = connection.droppedWarning();
      if (dropped) warnings.push({ type: 'warning', code: 'mcp-tools-dropped', ...dropped });
    }
    return warnings;
  }

  /**
   * Relays a run's events to the other tabs of the origin, and applies their stops and
   * decisions as the page's own: through the run's abort and its approval gate.
   */
  async #openRelay(
    conversationId: string,
    runId: string,
    controller: AbortController,
    approvals: ApprovalGate,
  ): Promise<RunRelay | undefined> {
    return (await this.#relays)?.open(conversationId, runId, {
      onStop: () => controller.abort(),
      onApproval: (approvalId, approved, reason) =>
        approvals.decide(approvalId, approved ? { approved: true } : { approved: false, reason }),
    });
  }

  /**
   * Follows the runs of a conversation, in whichever tab they run, on `port` until the page
   * closes the watch or the agent ends. Resolves when the watch ends.
   */
  async watch(untrustedConversationId: string, port: MessagePort): Promise<void> {
    const conversationId = parseArgument(
      apiSchemas.id,
      untrustedConversationId,
      'conversationId',
      'invalid-input',
    );
    const setup = await this.#setup;
    const { database } = setup.config.memory;
    const relays = await this.#relays;
    if (relays === undefined)
      throw new AirlockError(
        'invalid-usage',
        'This browser has no Web Locks: runs cannot be watched.',
      );
    // Loaded here, so agents that never watch never load the relay's parser.
    const { ConversationWatch } = await import('../tabs/conversation-watch');
    const watch = new ConversationWatch(
      {
        database,
        conversationId,
        channels: relays.channels,
        channelName: relayChannelName(database, conversationId),
        lockName: conversationLockName(database, conversationId),
        store: setup.store,
        runSeal: setup.runSeal,
      },
      port,
    );
    this.#watches.add(watch);
    try {
      await watch.closed;
    } finally {
      this.#watches.delete(watch);
    }
  }

  async #startTools(
    config: AgentConfig,
    pageTools: Comlink.Remote<ToolHost>,
    sandboxes: Comlink.Remote<SandboxSpawner>,
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
      const { SandboxSupervisor } = await import('../tools/sandbox-supervisor');
      const started = await Promise.all(
        config.toolsets.map(async (toolset) => {
          const supervisor = new SandboxSupervisor(toolset, sandboxes);
          this.#supervisors.push(supervisor);
          return { toolset, supervisor, specs: await supervisor.start() };
        }),
      );
      for (const { toolset, supervisor, specs } of started) {
        registry.add(specs, supervisor, toolset.timeoutMs, `toolset "${toolset.name}"`);
      }
    }
    if (config.mcp && config.mcp.length > 0) {
      // Loaded here, so agents without MCP servers never load the MCP SDK.
      const { connectMcpServers } = await import('../mcp/mcp-servers');
      this.#mcp = await connectMcpServers(config.mcp, registry);
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
async function wrapModel(
  chatModel: ChatModel,
  config: AgentConfig,
  tokens: TokenCalibration,
): Promise<ChatModel> {
  // Innermost: a call's wait for the network is one call to the limiter, and no stream idles.
  let model = withNetworkWait(chatModel, {
    maxWaitMs: config.limits.networkWaitMs ?? DEFAULT_NETWORK_WAIT_MS,
  });
  if (config.rateLimit) model = withRateLimit(model, new RateLimiter(config.rateLimit), { tokens });
  if (config.model.toolCalling === 'prompted') {
    // Loaded at start, and only for an endpoint without function calling.
    const { withPromptedTools } = await import('../../model/prompted-tools');
    model = withPromptedTools(model);
  }
  return model;
}

/**
 * The knowledge base's embeddings, from the `/embeddings` path of `model.baseURL`. Without
 * one (a model of the app's own), adding or searching documents fails `invalid-options`.
 */
function embeddingModelFor(config: ModelConfig, knowledge: KnowledgeConfig): EmbeddingModel {
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

/** True for the reason a run is aborted with when its conversation is deleted. */
function isConversationDeleted(reason: unknown): reason is AirlockError {
  return isAirlockError(reason) && reason.code === 'conversation-deleted';
}

/**
 * Runs left `running` by a tab that is gone (its conversation's lock is free) are marked
 * interrupted, keeping the text they had streamed as an interrupted message. Repair never
 * stops the agent from starting: a row that is not a valid run (another version or any
 * same-origin script wrote it) or whose conversation is gone is skipped, and so is one
 * whose repair fails; the others are still repaired.
 */
async function markInterruptedRuns(
  store: ConversationStore,
  runSeal: Promise<RunSeal>,
  database: string,
): Promise<void> {
  const held = await heldLockNames();
  for (const row of await store.listRuns({ statuses: ['running'] })) {
    if (rowProblems('runs', row).length > 0) continue;
    const run = row;
    if (held.has(conversationLockName(database, run.conversationId))) continue;
    try {
      await markRunInterrupted(store, await runSeal, run);
    } catch (error) {
      // Only what belongs to one row is skipped; a store that fails as a whole fails start-up.
      if (!isAirlockError(error) || !['not-found', 'invalid-input'].includes(error.code))
        throw error;
    }
  }
}

function titleFrom(input: string): string {
  const line = input.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New conversation';
}
