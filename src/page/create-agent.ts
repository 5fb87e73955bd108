import * as Comlink from 'comlink';
import { AirlockError } from '../errors/airlock-error';
import type { AgentConfig, AgentWorkerApi, ModelConfig, RunLimits } from '../protocol/wire';
import type { Tool } from '../tools/define-tool';
import { AgentRun } from './agent-run';
import { PageToolHost } from './page-tool-host';

/** How the page describes an agent. */
export interface AgentOptions {
  /**
   * Starts the agent worker, in the form bundlers understand:
   * `() => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' })`.
   * The entry calls `serveAgent()` from `airlock/worker`.
   */
  readonly worker: () => Worker;
  /** The model endpoint. A relative `baseURL` (e.g. `/llm/v1`) is resolved against the page. */
  readonly model: ModelConfig;
  /** The system prompt. */
  readonly instructions?: string;
  /** Tools that run on the page thread (they can touch the DOM). */
  readonly tools?: readonly Tool[];
  /** Bounds on each run. */
  readonly limits?: Partial<RunLimits>;
}

/** Options of one run. */
export interface RunOptions {
  /** Aborting it ends the run with reason `aborted` and closes the model request. */
  readonly signal?: AbortSignal;
}

/** An agent bound to its worker. */
export interface Agent {
  /** Starts a run on the given user input; iterate it for events, await `result` for the outcome. */
  run(input: string, options?: RunOptions): AgentRun;
  /** Ends running runs with `agent-disposed` and terminates the worker. Idempotent. */
  dispose(): void;
  /** True once `dispose` was called. */
  readonly disposed: boolean;
}

const DEFAULT_LIMITS: RunLimits = { maxSteps: 10, streamIdleTimeoutMs: 30_000 };

/**
 * Creates an agent whose loop runs in a Web Worker. The page keeps only this thin client:
 * the model SDK and the loop live in the worker.
 */
export function createAgent(options: AgentOptions): Agent {
  if (typeof options.worker !== 'function') {
    throw new AirlockError(
      'invalid-options',
      '`worker` must be a function that returns a new Worker.',
    );
  }
  const tools = options.tools ?? [];
  assertUniqueNames(tools);
  const config: AgentConfig = {
    model: { ...options.model, baseURL: resolveBaseURL(options.model.baseURL) },
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    tools: tools.map((tool) => tool.descriptor),
    limits: { ...DEFAULT_LIMITS, ...options.limits },
  };
  const toolHost = new PageToolHost(tools);
  const worker = options.worker();
  const remote = Comlink.wrap<AgentWorkerApi>(worker);
  const runs = new Set<AgentRun>();
  let disposed = false;

  const failAll = (error: AirlockError) => {
    for (const run of [...runs]) run.fail(error);
    toolHost.cancelAll();
  };
  const onWorkerError = (event: ErrorEvent) => {
    // Handled here: the runs end with a typed error, so the browser need not report it as uncaught.
    event.preventDefault();
    failAll(
      new AirlockError(
        'worker-crashed',
        `The agent worker failed: ${event.message || 'it could not be loaded'}.`,
      ),
    );
  };
  worker.addEventListener('error', onWorkerError);

  return {
    get disposed() {
      return disposed;
    },
    run(input, runOptions = {}) {
      const runId = crypto.randomUUID();
      const channel = new MessageChannel();
      const signal = runOptions.signal;
      const onAbort = () => run.abort();
      const run = new AgentRun(runId, channel.port1, () => {
        runs.delete(run);
        signal?.removeEventListener('abort', onAbort);
      });
      if (disposed) {
        run.fail(new AirlockError('agent-disposed', 'This agent was disposed; create a new one.'));
        return run;
      }
      if (signal?.aborted) {
        run.abortBeforeStart(config.model.model);
        return run;
      }
      runs.add(run);
      remote
        .run(
          { runId, input, config },
          Comlink.transfer(channel.port2, [channel.port2]),
          Comlink.proxy(toolHost),
        )
        .catch((error: unknown) => {
          run.fail(
            new AirlockError('worker-crashed', 'The agent worker did not accept the run.', {
              cause: error,
            }),
          );
        });
      signal?.addEventListener('abort', onAbort, { once: true });
      return run;
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      failAll(
        new AirlockError('agent-disposed', 'The agent was disposed while the run was going on.'),
      );
      worker.removeEventListener('error', onWorkerError);
      remote[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}

function assertUniqueNames(tools: readonly Tool[]): void {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) {
      throw new AirlockError(
        'invalid-options',
        `Two tools are named "${tool.name}"; tool names must be unique.`,
      );
    }
    seen.add(tool.name);
  }
}

/** The worker resolves URLs against its own script, so a page-relative base URL is made absolute here. */
function resolveBaseURL(baseURL: string): string {
  try {
    return new URL(baseURL, globalThis.location?.href).href.replace(/\/$/, '');
  } catch (error) {
    throw new AirlockError('invalid-options', `model.baseURL "${baseURL}" is not a valid URL.`, {
      cause: error,
    });
  }
}
