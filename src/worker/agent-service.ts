import type * as Comlink from 'comlink';
import { AirlockError, toErrorData } from '../errors/airlock-error';
import { KnowledgeBase } from '../knowledge/knowledge-base';
import { readPendingStep, readRunRow } from '../memory/checkpoint-schema';
import { assertInputFits } from '../memory/context-window';
import { openStore } from '../memory/dexie-store';
import type { ConversationStore, RunRecord } from '../memory/store';
import type { ChatModel } from '../model/chat-model';
import { createOpenAIChatModel, createOpenAIEmbeddingModel } from '../model/openai-chat-model';
import { withPromptedTools } from '../model/prompted-tools';
import { withRateLimit } from '../model/rate-limited-model';
import { RateLimiter } from '../model/rate-limiter';
import type { AgentEvent } from '../protocol/events';
import type { GuardrailHost } from '../protocol/guardrails';
import { DEFAULT_KNOWLEDGE_CONFIG } from '../protocol/knowledge';
import type { SandboxSpawner } from '../protocol/sandbox-wire';
import type { ToolHost } from '../protocol/tools';
import type {
  AgentConfig,
  AgentWorkerApi,
  ConfigureResult,
  ResumeRequest,
  RunRequest,
} from '../protocol/wire';
import { parseAgentConfig } from './config-schema';
import { conversationLockName, heldLockNames } from './conversation-lock';
import { type AgentSetup, runConversation } from './conversation-run';
import { EventSink } from './event-sink';
import { GUARDRAIL_ABORTED, GuardrailGate, guardrailBlocked } from './guardrail-gate';
import { KnowledgeService } from './knowledge-api';
import { MemoryService } from './memory-api';
import { claimedRunId, parseResumeRequest, parseRunRequest } from './request-schema';
import { abortedRun, type ResumedStep } from './run-agent';
import { ApprovalGate } from './tools/approval-gate';
import { HostToolRunner } from './tools/host-tool-runner';
import { SEARCH_KNOWLEDGE } from './tools/knowledge-tools';
import { DEFAULT_TOOL_TIMEOUT_MS } from './tools/run-tool-calls';
import { SandboxSupervisor } from './tools/sandbox-supervisor';
import { ToolRegistry } from './tools/tool-registry';

/** Options of `serveAgent`, for tests and custom storage. */
export interface AgentServiceOptions {
  /** Opens the store for a database name (default: IndexedDB through Dexie). */
  readonly openStore?: (database: string) => ConversationStore;
}

/** How often expired memories are pruned while the agent lives. */
const PRUNE_INTERVAL_MS = 10 * 60_000;

/**
 * The agent worker's side of the seam. Configured once (model, store, page tools,
 * sandboxed toolsets), then one run at a time per conversation across tabs: each run
 * takes the conversation's Web Lock, builds its context from the store, and writes
 * every completed step back before the next model call.
 */
export class AgentService implements AgentWorkerApi {
  readonly memory: MemoryService;
  readonly knowledge: KnowledgeService;
  readonly #openStore: (database: string) => ConversationStore;
  readonly #supervisors: SandboxSupervisor[] = [];
  readonly #setup: Promise<AgentSetup>;
  #resolveSetup!: (setup: AgentSetup) => void;
  #rejectSetup!: (error: unknown) => void;

  constructor(options: AgentServiceOptions = {}) {
    this.#openStore = options.openStore ?? ((name) => openStore({ name }));
    this.#setup = new Promise((resolve, reject) => {
      this.#resolveSetup = resolve;
      this.#rejectSetup = reject;
    });
    // Nobody may be waiting yet; the failure is also returned by configure and seen by every run.
    this.#setup.catch(() => undefined);
    this.memory = new MemoryService(async () => (await this.#setup).store);
    this.knowledge = new KnowledgeService(async () => (await this.#setup).knowledge);
  }

  async configure(
    value: AgentConfig,
    pageTools: Comlink.Remote<ToolHost>,
    sandboxes: Comlink.Remote<SandboxSpawner>,
    guardrails: Comlink.Remote<GuardrailHost>,
  ): Promise<ConfigureResult> {
    try {
      const config = parseAgentConfig(value);
      const store = this.#openStore(config.memory.database);
      await store.pruneExpired();
      await markInterruptedRuns(store, config.memory.database);
      const registry = await this.#startTools(config, pageTools, sandboxes);
      const knowledge = config.knowledge ?? DEFAULT_KNOWLEDGE_CONFIG;
      this.#resolveSetup({
        config,
        model: modelFor(config),
        registry,
        store,
        knowledge: new KnowledgeBase(
          store,
          createOpenAIEmbeddingModel(config.model, {
            model: knowledge.embeddingModel,
            dimensions: knowledge.dimensions,
          }),
          knowledge,
        ),
        guardrails: new GuardrailGate(guardrails, config.guardrails),
      });
      // Lives as long as this worker, which ends with the agent. A failed prune is retried
      // at the next interval; runs never depend on it.
      setInterval(() => store.pruneExpired().catch(() => undefined), PRUNE_INTERVAL_MS);
      return { ok: true, tools: registry.names };
    } catch (error) {
      for (const supervisor of this.#supervisors.splice(0)) supervisor.dispose();
      this.#rejectSetup(error);
      return { ok: false, error: toErrorData(error) };
    }
  }

  run(untrusted: RunRequest, port: MessagePort): Promise<void> {
    return this.#serve(port, claimedRunId(untrusted), async (setup, emit, signal, approvals) => {
      const request = parseRunRequest(untrusted, setup.config.limits.maxInputChars);
      // Before anything is stored or sent: a blocked input leaves no trace, a rewritten one replaces it.
      const guarded = await setup.guardrails.input(
        request.input,
        { runId: request.runId, conversationId: request.conversationId },
        signal,
      );
      if (guarded === GUARDRAIL_ABORTED) {
        await emit({ type: 'run-start', runId: request.runId, model: setup.model.name });
        await emit({
          type: 'run-finish',
          ...abortedRun(request.runId, request.conversationId),
        });
        return;
      }
      if (guarded.action === 'block') throw guardrailBlocked('input', guarded);
      const input = { role: 'user', content: guarded.value } as const;
      // Measured as it will be sent (a guardrail may have rewritten it), before it is stored.
      assertInputFits(input, setup.config.memory.window);
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
      await setup.store.ensureConversation(request.conversationId, titleFrom(guarded.value));
      await runConversation(setup, run, { input }, { emit, signal, approvals });
    });
  }

  resume(untrusted: ResumeRequest, port: MessagePort): Promise<void> {
    return this.#serve(port, claimedRunId(untrusted), async (setup, emit, signal, approvals) => {
      const request = parseResumeRequest(untrusted);
      const run = readRunRow(await setup.store.getRun(request.runId));
      if (!run?.pendingStep || run.status !== 'awaiting-approval') {
        throw new AirlockError('not-found', `No run ${request.runId} waits for approval.`);
      }
      const pending = readPendingStep(run);
      const resume: ResumedStep = {
        step: run.step,
        assistant: pending.assistant,
        settled: pending.settled,
      };
      // The record was checked whole (allowlist included) by readRunRow.
      const allowedTools = narrowAllowlist(run.allowedTools, request.allowedTools);
      const resumed: RunRecord = {
        ...run,
        ...(allowedTools === undefined ? {} : { allowedTools }),
      };
      await runConversation(setup, resumed, { resume }, { emit, signal, approvals });
    });
  }

  /** Sets up the run's port and reports any failure on it as `run-error`. */
  async #serve(
    port: MessagePort,
    runId: string,
    body: (
      setup: AgentSetup,
      emit: (event: AgentEvent) => Promise<void>,
      signal: AbortSignal,
      approvals: ApprovalGate,
    ) => Promise<void>,
  ): Promise<void> {
    const controller = new AbortController();
    const approvals = new ApprovalGate();
    const sink = new EventSink(port, {
      onCancel: () => controller.abort(),
      onApproval: (approvalId, decision) => approvals.decide(approvalId, decision),
    });
    const emit = (event: AgentEvent) => sink.emit(event);
    try {
      await body(await this.#setup, emit, controller.signal, approvals);
    } catch (error) {
      await emit({ type: 'run-error', runId, error: toErrorData(error) });
    } finally {
      sink.close();
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

const MEMORY_TOOL_NAMES = ['save_memory', 'recall_memories', 'forget_memory'];

/** Whether runs offer the `search_knowledge` tool. */
function offersKnowledgeTool(config: AgentConfig): boolean {
  const retrieval = config.knowledge?.retrieval ?? DEFAULT_KNOWLEDGE_CONFIG.retrieval;
  return retrieval === 'tool' || retrieval === 'both';
}

/**
 * The agent's model: the openai client, behind the agent's rate limit (one limiter for all
 * its runs), behind prompted tool calling when the endpoint has no function calling (outermost,
 * so the limiter measures the prompt that is really sent).
 */
function modelFor(config: AgentConfig): ChatModel {
  let model = createOpenAIChatModel(config.model);
  if (config.rateLimit) model = withRateLimit(model, new RateLimiter(config.rateLimit));
  if (config.model.toolCalling === 'prompted') model = withPromptedTools(model);
  return model;
}

/**
 * Runs left `running` by a tab that is gone (its conversation's lock is free) are marked
 * interrupted, keeping the text they had streamed as an interrupted message.
 */
async function markInterruptedRuns(store: ConversationStore, database: string): Promise<void> {
  const held = await heldLockNames();
  for (const run of await store.listRuns({ statuses: ['running'] })) {
    if (held.has(conversationLockName(database, run.conversationId))) continue;
    await store.commitStep({
      conversationId: run.conversationId,
      runId: run.id,
      messages: run.partialText ? [{ role: 'assistant', content: run.partialText }] : [],
      status: 'interrupted',
      run: { ...run, status: 'interrupted', updatedAt: Date.now() },
    });
  }
}

/** What a resume may run: the stored allowlist, narrowed (never widened) by the one the resume asks for. */
function narrowAllowlist(
  stored: readonly string[] | undefined,
  requested: readonly string[] | undefined,
): readonly string[] | undefined {
  if (requested === undefined) return stored;
  if (stored === undefined) return requested;
  const allowed = new Set(stored);
  return requested.filter((name) => allowed.has(name));
}

function titleFrom(input: string): string {
  const line = input.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New conversation';
}
