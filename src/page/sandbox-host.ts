import { AirlockError } from '../errors/airlock-error';
import type { SandboxConnect, SandboxSpawner } from '../protocol/sandbox-wire';
import { planIframeSandbox, startIframeWorker } from './iframe-sandbox';
import { checkToolsetOptions } from './toolset-checks';
import type { SandboxStats, ToolsetOptions } from './toolset-options';
import { transfer } from './worker-calls';

/** Starts one tool worker connected to `port`; returns what kills it. */
type WorkerLauncher = (port: MessagePort) => () => void;

/**
 * The page's part in sandboxing: only the thread (or document) that created a worker can
 * end it, so workers are created and killed here, on the supervisor's word. Tool calls
 * themselves never pass through the page.
 */
export class SandboxHost implements SandboxSpawner {
  readonly #launchers: ReadonlyMap<string, WorkerLauncher>;
  readonly #workers = new Map<number, { toolset: string; kill: () => void }>();
  readonly #stats = new Map<string, { started: number; killed: number }>();
  #nextId = 1;
  #disposed = false;

  /** Checks every toolset's options; a bad one is an `invalid-options` error. */
  constructor(toolsets: readonly ToolsetOptions[]) {
    this.#launchers = new Map(toolsets.map((toolset) => [toolset.name, toLauncher(toolset)]));
    for (const toolset of toolsets) this.#stats.set(toolset.name, { started: 0, killed: 0 });
  }

  async spawn(toolset: string): Promise<{ workerId: number; port: MessagePort }> {
    // A supervisor still busy when the agent was disposed must not start workers nobody ends.
    if (this.#disposed) throw new AirlockError('agent-disposed', 'The agent was disposed.');
    const launch = this.#launchers.get(toolset);
    if (!launch)
      throw new AirlockError('invalid-options', `There is no toolset named "${toolset}".`);
    const channel = new MessageChannel();
    const kill = launch(channel.port2);
    const workerId = this.#nextId++;
    this.#workers.set(workerId, { toolset, kill });
    this.#count(toolset, 'started');
    return transfer({ workerId, port: channel.port1 }, [channel.port1]);
  }

  kill(workerId: number): void {
    const entry = this.#workers.get(workerId);
    if (!entry) return;
    entry.kill();
    this.#workers.delete(workerId);
    this.#count(entry.toolset, 'killed');
  }

  /** Worker counts per toolset. */
  stats(): Record<string, SandboxStats> {
    const result: Record<string, SandboxStats> = {};
    for (const [name, counts] of this.#stats) {
      const live = [...this.#workers.values()].filter((entry) => entry.toolset === name).length;
      result[name] = { live, ...counts };
    }
    return result;
  }

  /** Terminates every worker (the agent was disposed). */
  dispose(): void {
    this.#disposed = true;
    for (const { kill } of this.#workers.values()) kill();
    this.#workers.clear();
  }

  #count(toolset: string, what: 'started' | 'killed'): void {
    const counts = this.#stats.get(toolset);
    if (counts) counts[what] += 1;
  }
}

function toLauncher(toolset: ToolsetOptions): WorkerLauncher {
  checkToolsetOptions(toolset);
  if (toolset.isolation === 'iframe') {
    const plan = planIframeSandbox(toolset.name, toolset.workerUrl, toolset.allowedOrigins);
    return (port) => startIframeWorker(toolset.name, plan, port);
  }
  const createWorker = toolset.worker;
  return (port) => {
    const worker = createWorker();
    const connect: SandboxConnect = { kind: 'airlock-sandbox-connect', port };
    worker.postMessage(connect, [port]);
    return () => worker.terminate();
  };
}
