import type * as Comlink from 'comlink';
import { AirlockError, toErrorData } from '../errors/airlock-error';
import type { ChatModel } from '../model/chat-model';
import { createOpenAIChatModel } from '../model/openai-chat-model';
import type { ChatMessage } from '../protocol/chat';
import type { AgentEvent } from '../protocol/events';
import type { SandboxSpawner } from '../protocol/sandbox-wire';
import type { ToolCallRecord, ToolHost } from '../protocol/tools';
import type { AgentConfig, AgentWorkerApi, ConfigureResult, RunRequest } from '../protocol/wire';
import { parseAgentConfig } from './config-schema';
import { EventSink } from './event-sink';
import { runAgent } from './run-agent';
import { ApprovalGate } from './tools/approval-gate';
import { AuditLog } from './tools/audit-log';
import { PageToolRunner } from './tools/page-tool-runner';
import { DEFAULT_TOOL_TIMEOUT_MS } from './tools/run-tool-calls';
import { SandboxSupervisor } from './tools/sandbox-supervisor';
import { ToolRegistry } from './tools/tool-registry';

/** What `configure` sets up once and every run uses. */
interface AgentSetup {
  readonly config: AgentConfig;
  readonly model: ChatModel;
  readonly registry: ToolRegistry;
}

/**
 * The agent worker's side of the seam: configured once (model, page tools, sandboxed
 * toolsets started and asked for their tools), then one run at a time, its events over
 * the run's port, and the conversation so far kept for the next run.
 */
export class AgentService implements AgentWorkerApi {
  readonly #audit = new AuditLog();
  readonly #supervisors: SandboxSupervisor[] = [];
  #setup: AgentSetup | undefined;
  #history: ChatMessage[] = [];
  #running = false;

  async configure(
    value: AgentConfig,
    pageTools: Comlink.Remote<ToolHost>,
    sandboxes: Comlink.Remote<SandboxSpawner>,
  ): Promise<ConfigureResult> {
    try {
      const config = parseAgentConfig(value);
      const registry = new ToolRegistry();
      registry.add(
        config.pageTools,
        new PageToolRunner(pageTools),
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
        if (!registry.get(name)) {
          throw new AirlockError(
            'invalid-options',
            `allowedTools names "${name}", which no tool is called.`,
          );
        }
      }
      this.#setup = { config, model: createOpenAIChatModel(config.model), registry };
      return { ok: true, tools: registry.names };
    } catch (error) {
      for (const supervisor of this.#supervisors.splice(0)) supervisor.dispose();
      return { ok: false, error: toErrorData(error) };
    }
  }

  async run(request: RunRequest, port: MessagePort): Promise<void> {
    const controller = new AbortController();
    const approvals = new ApprovalGate();
    const sink = new EventSink(port, {
      onCancel: () => controller.abort(),
      onApproval: (callId, decision) => approvals.decide(callId, decision),
    });
    const emit = (event: AgentEvent) => sink.emit(event);
    try {
      if (this.#running) {
        throw new AirlockError(
          'run-in-progress',
          'This agent is already running; wait for its run to end or abort it.',
        );
      }
      const setup = this.#setup;
      if (!setup)
        throw new AirlockError(
          'invalid-usage',
          'The agent worker was not configured before the run.',
        );
      this.#running = true;
      try {
        await this.#runOnce(setup, request, approvals, emit, controller.signal);
      } finally {
        this.#running = false;
      }
    } catch (error) {
      await emit({ type: 'run-error', runId: request.runId, error: toErrorData(error) });
    } finally {
      sink.close();
    }
  }

  async toolCalls(): Promise<readonly ToolCallRecord[]> {
    return this.#audit.list();
  }

  async #runOnce(
    setup: AgentSetup,
    request: RunRequest,
    approvals: ApprovalGate,
    emit: (event: AgentEvent) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    const { config, model, registry } = setup;
    const agentAllows = allowlist(config.allowedTools);
    const runAllows = allowlist(request.allowedTools);
    await emit({ type: 'run-start', runId: request.runId, model: model.name });
    const outcome = await runAgent({
      runId: request.runId,
      input: request.input,
      config,
      model,
      tools: {
        registry,
        allowed: (name) => agentAllows(name) && runAllows(name),
        approvals,
        audit: this.#audit,
      },
      history: this.#history,
      signal,
      emit,
    });
    this.#history = [...this.#history, ...outcome.messages];
    await emit({ type: 'run-finish', ...outcome.result });
  }
}

function allowlist(names: readonly string[] | undefined): (name: string) => boolean {
  if (!names) return () => true;
  const allowed = new Set(names);
  return (name) => allowed.has(name);
}
