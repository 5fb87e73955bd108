import { AirlockError } from '../errors/airlock-error';
import type {
  SandboxConnect,
  SandboxLoadFailed,
  SandboxSpawner,
  SpawnedWorker,
} from '../protocol/sandbox-wire';
import { planIframeSandbox, startIframeWorker } from './iframe-sandbox';
import { checkToolsetOptions } from './toolset-checks';
import type { SandboxStats, ToolsetOptions } from './toolset-options';
import { transfer } from './worker-calls';

/**
 * Starts one tool worker connected to `port`, and hands `status` to whoever hears its load
 * fail (the page for the worker tier, the sandbox document for the iframe tier); returns
 * what kills it.
 */
type WorkerLauncher = (port: MessagePort, status: MessagePort) => () => void;

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

  async spawn(toolset: string): Promise<SpawnedWorker> {
    // A supervisor still busy when the agent was disposed must not start workers nobody ends.
    if (this.#disposed) throw new AirlockError('agent-disposed', 'The agent was disposed.');
    const launch = this.#launchers.get(toolset);
    if (!launch)
      throw new AirlockError('invalid-options', `There is no toolset named "${toolset}".`);
    const channel = new MessageChannel();
    const status = new MessageChannel();
    const kill = launch(channel.port2, status.port2);
    const workerId = this.#nextId++;
    this.#workers.set(workerId, { toolset, kill });
    this.#count(toolset, 'started');
    return transfer({ workerId, port: channel.port1, status: status.port1 }, [
      channel.port1,
      status.port1,
    ]);
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
    return (port, status) => startIframeWorker(toolset.name, plan, port, status);
  }
  const createWorker = toolset.worker;
  return (port, status) => {
    const worker = createWorker();
    // A script that cannot load (404, syntax error, MIME type, CSP) fires `error` on the
    // worker, here only: told to the supervisor so that the start fails now, not at its
    // deadline. It listens until the worker has described its tools; a later error (a
    // tool's uncaught one) reaches a closed port and is the console's, as before.
    const onError = (event: Event) => {
      worker.removeEventListener('error', onError);
      status.postMessage(loadFailed(event));
      status.close();
    };
    worker.addEventListener('error', onError);
    const connect: SandboxConnect = { kind: 'airlock-sandbox-connect', port };
    worker.postMessage(connect, [port]);
    return () => {
      worker.removeEventListener('error', onError);
      status.close();
      worker.terminate();
    };
  };
}

/** What a worker's `error` event tells of a failed load: engines give a message for a syntax error, nothing for a 404. */
function loadFailed(event: Event): SandboxLoadFailed {
  const error = event instanceof ErrorEvent ? event : undefined;
  const reason =
    error?.message ||
    'its script could not be loaded (not found, a network error, a MIME type or CSP refusal)';
  return error?.filename
    ? { kind: 'load-failed', reason, url: error.filename }
    : { kind: 'load-failed', reason };
}
