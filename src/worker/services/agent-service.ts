import type * as Comlink from 'comlink';
import { AirlockError, isAirlockError, toErrorData } from '../../errors/airlock-error';
import type { ChatModel } from '../../model/chat-model';
import { TokenCalibration } from '../../model/estimate-tokens';
import { forwardedNetwork } from '../../model/network-wait';
import type { AgentConfig, ModelConfig } from '../../protocol/agent-config';
import type { AgentEvent } from '../../protocol/events';
import type { GuardrailHost } from '../../protocol/guardrails';
import type { SandboxSpawner } from '../../protocol/sandbox-wire';
import {
  KNOWLEDGE_METHODS,
  type KnowledgeApi,
  MEMORY_METHODS,
  type MemoryWire,
} from '../../protocol/store-api';
import { relayChannelName } from '../../protocol/tab-relay';
import type { ToolHost } from '../../protocol/tools';
import type {
  AgentWorkerApi,
  ConfigureResult,
  ResumeRequest,
  RunRequest,
} from '../../protocol/wire';
import { lazyMethods } from '../../runtime/lazy-methods';
import { loadChunk } from '../../runtime/load-chunk';
import { settledLater } from '../../runtime/settled-later';
import { DEFAULT_OPEN_TIMEOUT_MS, openStore } from '../../store/dexie-store';
import type { ConversationStore } from '../../store/store';
import { type Cancel, every } from '../../timing/later';
import { waitFor } from '../../timing/wait';
import { ContextCache } from '../context/context-cache';
import { conversationLockName } from '../run/conversation-lock';
import { type AgentSetup, lastingScopes, type RunChannel } from '../run/run-setup';
import type { ConversationWatch } from '../tabs/conversation-watch';
import type { RunRelay, RunRelays } from '../tabs/run-relay';
import type { ApprovalGate } from '../tools/approval-gate';
import {
  chatModelFor,
  compiledLearnRules,
  guardrailsFor,
  loadKnowledgeBase,
  loadRunRelays,
  loadRunSeal,
  markInterruptedRuns,
  type StartedTools,
  startTools,
  wrapModel,
} from './agent-assembly';
import { parseAgentConfig } from './config-schema';
import { apiSchemas, claimedRunId, parseArgument } from './request-schema';
import { resumeRun, type ServedRun, serveRun, startRun } from './run-requests';

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
  /** The network as the worker sees it and as the pages of its runs forward it. */
  readonly #network = forwardedNetwork();
  readonly memory: MemoryWire;
  readonly knowledge: KnowledgeApi;
  readonly #openStore: NonNullable<AgentServiceOptions['openStore']>;
  readonly #customModel: AgentServiceOptions['model'];
  /** The sandbox supervisors and MCP connections the tools' start left running, ended with the agent. */
  readonly #started: StartedTools = { supervisors: [], mcp: [] };
  readonly #setup: Promise<AgentSetup>;
  readonly #served = new Set<ServedRun>();
  /** The watches of this worker's page, closed with the agent. */
  readonly #watches = new Set<ConversationWatch>();
  /**
   * The relays of the agent's runs and the channels its watches open, on the app's tab hub
   * (every tab of the origin) or on a hub of this worker's own (this agent's watches only).
   * Made (and loaded) at configure; undefined without Web Locks (very old engines), where
   * runs are not watchable. A failed load fails the runs and watches, not the start.
   */
  #relays: Promise<RunRelays> | undefined;
  /** Set when IndexedDB could not be opened and the agent keeps its data in memory. */
  #storageWarning: string | undefined;
  /** The store, from the moment configure opens it, so `close` can close it even mid-start. */
  #store: ConversationStore | undefined;
  #stopPruning: Cancel | undefined;
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
      const { MemoryService } = await loadChunk('memory-api', () => import('./memory-api'));
      return new MemoryService(
        () => this.#setup,
        (conversationId) => this.#endRunsOf(conversationId),
      );
    });
    this.knowledge = lazyMethods(KNOWLEDGE_METHODS, async () => {
      const { KnowledgeService } = await loadChunk(
        'knowledge-api',
        () => import('./knowledge-api'),
      );
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
      const chatModel = await chatModelFor(config.model, this.#customModel);
      const learnRules = await compiledLearnRules(config);
      if (typeof navigator !== 'undefined' && navigator.locks)
        this.#relays = settledLater(loadRunRelays(config.memory.database, tabHub));
      const store = await this.#startStore(config);
      // Both load while the tools start.
      const runSeal = settledLater(loadRunSeal(store));
      const knowledgeBase = settledLater(loadKnowledgeBase(store, config));
      await markInterruptedRuns(store, runSeal, config.memory.database);
      const registry = await startTools(config, pageTools, sandboxes, this.#started);
      const tokens = new TokenCalibration();
      this.#resolveSetup({
        config,
        model: await wrapModel(chatModel, config, tokens, this.#network),
        tokens,
        registry,
        store,
        runSeal: await runSeal,
        knowledge: await knowledgeBase,
        guardrails: await guardrailsFor(guardrails, config.guardrails),
        learnRules,
        // Loaded now, off the first run's path: an agent without them never loads them.
        ...(config.memory.tools
          ? {
              memoryTools: settledLater(
                loadChunk('memory-tools', () => import('../tools/memory-tools')),
              ),
            }
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
      this.#stopPruning = every(PRUNE_INTERVAL_MS, () => {
        store.pruneExpired().catch(() => undefined);
      });
      return {
        ok: true,
        tools: registry.names,
        specs: registry.specs(() => true),
        storage: { backend: this.#storageWarning === undefined ? 'indexeddb' : 'memory' },
      };
    } catch (error) {
      for (const supervisor of this.#started.supervisors.splice(0)) supervisor.dispose();
      await this.#closeMcp();
      this.#rejectSetup(error);
      return { ok: false, error: toErrorData(error) };
    }
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
      const { createMemoryStore } = await loadChunk(
        'memory-store',
        () => import('../../store/memory-store'),
      );
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
    this.#stopPruning?.();
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
    const connections = this.#started.mcp;
    this.#started.mcp = [];
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
    await waitFor(Promise.all(ending.map((run) => run.ended)), { timeoutMs: DELETE_WAIT_MS });
  }

  run(
    untrusted: RunRequest,
    port: MessagePort,
    runTools?: Comlink.Remote<ToolHost>,
  ): Promise<void> {
    return this.#serve(port, claimedRunId(untrusted), runTools, (setup, channel, served) =>
      startRun(setup, untrusted, channel, served),
    );
  }

  resume(
    untrusted: ResumeRequest,
    port: MessagePort,
    runTools?: Comlink.Remote<ToolHost>,
  ): Promise<void> {
    return this.#serve(port, claimedRunId(untrusted), runTools, (setup, channel, served) =>
      resumeRun(setup, untrusted, channel, served),
    );
  }

  /** Serves one run on its port: see `serveRun`. */
  #serve(
    port: MessagePort,
    runId: string,
    runTools: Comlink.Remote<ToolHost> | undefined,
    body: (setup: AgentSetup, channel: RunChannel, served: ServedRun) => Promise<void>,
  ): Promise<void> {
    return serveRun(
      { port, runId, runTools, body },
      {
        setup: this.#setup,
        served: this.#served,
        network: this.#network,
        startWarnings: () => this.#startWarnings(),
        openRelay: (conversationId, relayedRunId, controller, approvals) =>
          this.#openRelay(conversationId, relayedRunId, controller, approvals),
      },
    );
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
    for (const connection of this.#started.mcp) {
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
    const { ConversationWatch } = await loadChunk(
      'conversation-watch',
      () => import('../tabs/conversation-watch'),
    );
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
}
