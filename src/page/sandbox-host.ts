import * as Comlink from 'comlink';
import { AirlockError } from '../errors/airlock-error';
import type { IsolationTier, SandboxConnect, SandboxSpawner } from '../protocol/sandbox-wire';

/** How the page describes a set of sandboxed tools. */
export interface ToolsetOptions {
  /** Names the toolset in errors and stats. */
  readonly name: string;
  /**
   * Starts a tool worker, in the form bundlers understand:
   * `() => new Worker(new URL('./tools.worker.ts', import.meta.url), { type: 'module' })`.
   * The entry calls `serveTools([...])` from `airlock/sandbox`. Called again for every
   * replacement of a killed worker.
   */
  readonly worker: () => Worker;
  /** `worker` (default): thread isolation and a hard kill. `iframe` is not available yet. */
  readonly isolation?: IsolationTier;
  /** Workers kept started and idle (default 1). */
  readonly poolSize?: number;
  /** Calls running at once (default 4). */
  readonly maxConcurrency?: number;
  /** Deadline of a call whose tool sets none (default 30 000 ms). */
  readonly timeoutMs?: number;
  /** Time a late tool gets to honour its AbortSignal before its worker is killed (default 30 ms). */
  readonly graceMs?: number;
  /** Time a new worker may take to load and describe its tools (default 10 000 ms). */
  readonly startTimeoutMs?: number;
}

/** Live and lifetime worker counts of one toolset, as the page sees them. */
export interface SandboxStats {
  /** Workers started and not terminated. */
  readonly live: number;
  readonly started: number;
  readonly killed: number;
}

/**
 * The page's part in sandboxing: only the thread that created a worker can terminate
 * it, so workers are created and killed here, on the supervisor's word. Tool calls
 * themselves never pass through the page.
 */
export class SandboxHost implements SandboxSpawner {
  readonly #toolsets: ReadonlyMap<string, ToolsetOptions>;
  readonly #workers = new Map<number, { toolset: string; worker: Worker }>();
  readonly #stats = new Map<string, { started: number; killed: number }>();
  #nextId = 1;

  constructor(toolsets: readonly ToolsetOptions[]) {
    this.#toolsets = new Map(toolsets.map((toolset) => [toolset.name, toolset]));
    for (const toolset of toolsets) this.#stats.set(toolset.name, { started: 0, killed: 0 });
  }

  async spawn(toolset: string): Promise<{ workerId: number; port: MessagePort }> {
    const options = this.#toolsets.get(toolset);
    if (!options)
      throw new AirlockError('invalid-options', `There is no toolset named "${toolset}".`);
    const worker = options.worker();
    const workerId = this.#nextId++;
    this.#workers.set(workerId, { toolset, worker });
    this.#count(toolset, 'started');
    const channel = new MessageChannel();
    const connect: SandboxConnect = { kind: 'airlock-sandbox-connect', port: channel.port2 };
    worker.postMessage(connect, [channel.port2]);
    return Comlink.transfer({ workerId, port: channel.port1 }, [channel.port1]);
  }

  kill(workerId: number): void {
    const entry = this.#workers.get(workerId);
    if (!entry) return;
    entry.worker.terminate();
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
    for (const { worker } of this.#workers.values()) worker.terminate();
    this.#workers.clear();
  }

  #count(toolset: string, what: 'started' | 'killed'): void {
    const counts = this.#stats.get(toolset);
    if (counts) counts[what] += 1;
  }
}
