import type * as Comlink from 'comlink';
import { AirlockError } from '../../errors/airlock-error';
import type { SandboxSpawner, ToolsetConfig } from '../../protocol/sandbox-wire';
import type { ToolCallRequest, ToolCheck, ToolOutcome, ToolSpec } from '../../protocol/tools';
import { parseToolSpecs } from '../config-schema';
import { TIMED_OUT, withDeadline } from './deadline';
import { SandboxConnection } from './sandbox-connection';
import { Semaphore } from './semaphore';
import { type ToolRunner, timedOut } from './tool-runner';

/**
 * Runs one toolset's calls in its tool workers and enforces their deadlines for real:
 * at the deadline the tool's signal fires; if it has not answered `graceMs` later its
 * worker is terminated (no code, however stuck, survives that) and replaced. Workers
 * are kept warm in a pool; calls beyond `maxConcurrency` wait for a free one.
 */
export class SandboxSupervisor implements ToolRunner {
  readonly #config: ToolsetConfig;
  readonly #spawner: Comlink.Remote<SandboxSpawner>;
  readonly #slots: Semaphore;
  readonly #idle: SandboxConnection[] = [];
  readonly #busy = new Map<string, SandboxConnection>();
  /** Workers the pool is starting in the background; a call may claim one instead of starting its own. */
  readonly #warming = new Set<{ readonly worker: Promise<SandboxConnection>; claimed: boolean }>();
  #disposed = false;

  constructor(config: ToolsetConfig, spawner: Comlink.Remote<SandboxSpawner>) {
    this.#config = config;
    this.#spawner = spawner;
    this.#slots = new Semaphore(config.maxConcurrency);
  }

  /** Warms the whole pool, then returns the tools the first worker says it serves. */
  async start(): Promise<readonly ToolSpec[]> {
    const count = Math.max(1, this.#config.poolSize);
    const started = await Promise.allSettled(Array.from({ length: count }, () => this.#spawn()));
    for (const result of started)
      if (result.status === 'fulfilled') this.#idle.push(result.value.worker);
    const first = started.find((result) => result.status === 'fulfilled');
    if (!first)
      throw started[0]?.status === 'rejected' ? started[0].reason : new Error('No worker started.');
    // Workers that failed to start are retried in the background; one that did is enough to go on.
    this.#refill();
    return parseToolSpecs(first.value.tools, this.#config.name);
  }

  check(request: ToolCallRequest, timeoutMs: number): Promise<ToolCheck> {
    return this.#call(request, timeoutMs, (worker) => worker.check(request));
  }

  execute(request: ToolCallRequest, timeoutMs: number): Promise<ToolOutcome> {
    return this.#call(request, timeoutMs, (worker) => worker.execute(request));
  }

  cancel(callId: string): void {
    this.#busy.get(callId)?.cancel(callId);
  }

  /** Kills every worker of the toolset. */
  dispose(): void {
    this.#disposed = true;
    for (const worker of [...this.#idle, ...this.#busy.values()]) this.#kill(worker);
    this.#idle.length = 0;
  }

  async #call<T extends ToolCheck | ToolOutcome>(
    request: ToolCallRequest,
    timeoutMs: number,
    send: (worker: SandboxConnection) => Promise<T>,
  ): Promise<T | ReturnType<typeof timedOut>> {
    const release = await this.#slots.acquire();
    try {
      const worker = await this.#acquire();
      this.#busy.set(request.callId, worker);
      try {
        const answer = send(worker);
        const onTime = await withDeadline(answer, timeoutMs);
        if (onTime !== TIMED_OUT) {
          this.#idle.push(worker);
          return onTime;
        }
        worker.cancel(request.callId);
        const late = await withDeadline(answer, this.#config.graceMs);
        if (late === TIMED_OUT) {
          this.#kill(worker);
          return timedOut(request.toolName, timeoutMs, 'its worker was killed');
        }
        this.#idle.push(worker);
        return timedOut(request.toolName, timeoutMs, 'it was cancelled');
      } finally {
        this.#busy.delete(request.callId);
      }
    } catch (error) {
      return {
        ok: false,
        error: {
          code: 'tool-crashed',
          message: `Toolset "${this.#config.name}" could not start a worker: ${error instanceof Error ? error.message : String(error)}`,
        },
      };
    } finally {
      release();
    }
  }

  /** An idle worker, else one the pool is starting, else a new one. */
  async #acquire(): Promise<SandboxConnection> {
    const idle = this.#idle.pop();
    if (idle) return idle;
    for (const warming of this.#warming) {
      if (warming.claimed) continue;
      warming.claimed = true;
      // A warm-up that failed is no reason to fail the call: start one for it instead.
      const worker = await warming.worker.catch(() => undefined);
      if (worker) return worker;
      break;
    }
    return (await this.#spawn()).worker;
  }

  /**
   * Starts a worker and waits until it has described its tools, so a cold start is
   * never charged to a call's deadline; one that does not answer in `startTimeoutMs` is killed.
   */
  async #spawn(): Promise<{ worker: SandboxConnection; tools: unknown }> {
    const { workerId, port } = await this.#spawner.spawn(this.#config.name);
    const worker = new SandboxConnection(workerId, port);
    const tools = await withDeadline(worker.describe(), this.#config.startTimeoutMs);
    if (tools === TIMED_OUT || tools === undefined) {
      // No refill: a worker that cannot start would only be started again and again.
      this.#kill(worker, false);
      const hint =
        this.#config.isolation === 'iframe'
          ? 'Is its bundle served with CORS (Access-Control-Allow-Origin: *), and does its entry call serveTools()?'
          : 'Does its worker entry call serveTools()?';
      throw new AirlockError(
        'toolset-unavailable',
        `Toolset "${this.#config.name}" did not describe its tools within ${this.#config.startTimeoutMs} ms. ${hint}`,
      );
    }
    return { worker, tools };
  }

  #kill(worker: SandboxConnection, refill = true): void {
    // Out of the busy set first, so the refill below counts the pool without it.
    for (const [callId, busy] of this.#busy) if (busy === worker) this.#busy.delete(callId);
    worker.close();
    // Best effort: when the page is gone its workers went with it.
    this.#spawner.kill(worker.workerId).catch(() => undefined);
    if (refill) this.#refill();
  }

  /** Starts workers in the background until the pool is back to `poolSize`. */
  #refill(): void {
    const missing =
      this.#config.poolSize - (this.#idle.length + this.#busy.size + this.#warming.size);
    for (let i = 0; i < missing && !this.#disposed; i++) {
      const warming = { worker: this.#spawn().then(({ worker }) => worker), claimed: false };
      this.#warming.add(warming);
      warming.worker.then(
        (worker) => {
          this.#warming.delete(warming);
          if (this.#disposed) this.#kill(worker);
          else if (!warming.claimed) this.#idle.push(worker);
        },
        // A failed warm-up is not fatal: the next call starts a worker and reports the error.
        () => this.#warming.delete(warming),
      );
    }
  }
}
