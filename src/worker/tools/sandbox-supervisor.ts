import type * as Comlink from 'comlink';
import { AirlockError } from '../../errors/airlock-error';
import type { SandboxSpawner, ToolsetConfig } from '../../protocol/sandbox-wire';
import type { ToolCallRequest, ToolSpec } from '../../protocol/tools';
import { waitFor } from '../../timing/wait';
import { describeThrown } from '../../tools/run-tool';
import { toolCancelled } from '../../tools/tool-cancelled';
import { toolFailure } from '../../tools/tool-failure';
import { describedTools, loadFailure } from './described-worker';
import { type NestedToolCall, SandboxConnection } from './sandbox-connection';
import { Semaphore } from './semaphore';
import { type CallScope, type ToolRunner, timedOut } from './tool-runner';
import { parseToolSpecs } from './tool-spec-schema';

/** A starting worker a call may claim instead of starting its own. */
interface Warming {
  readonly worker: Promise<SandboxConnection>;
  claimed: boolean;
}

/**
 * Runs one toolset's calls in its tool workers and enforces their deadlines for real:
 * at the deadline the tool's signal fires; if it has not answered `graceMs` later its
 * worker is terminated (no code, however stuck, survives that) and replaced.
 *
 * Two kinds of worker, because a tool's code can rewrite anything in the worker it runs in:
 * - the policy worker describes the toolset (its tools' policies are recorded once, from
 *   it, at start) and checks calls (schemas, approval rules of the arguments). It is never
 *   asked to execute, so no tool code ever runs in it;
 * - execution workers run calls. A fresh one is bound to the call's run or conversation
 *   (`reuse`) and never serves another; fresh ones are kept warm (`poolSize`). A burst
 *   starts up to `maxConcurrency` of them; once its calls settle its scope keeps one.
 */
export class SandboxSupervisor implements ToolRunner {
  readonly #config: ToolsetConfig;
  readonly #spawner: Comlink.Remote<SandboxSpawner>;
  readonly #slots: Semaphore;
  #policy: Promise<SandboxConnection> | undefined;
  /** The policy worker once started, to know it when it misbehaves. */
  #policyConnection: SandboxConnection | undefined;
  /** Started, never used: any scope may take one. */
  readonly #fresh: SandboxConnection[] = [];
  readonly #warming = new Set<Warming>();
  /** Idle workers bound to a scope key, least recently used key first. */
  readonly #bound = new Map<string, SandboxConnection[]>();
  /** Calls from the moment they ask for a worker until they settle, by the call's key. */
  readonly #calls = new Map<string, CallInFlight>();
  /** Ended runs that still have calls in flight: their workers go when the last one settles. */
  readonly #ending = new Set<string>();
  #disposed = false;

  constructor(config: ToolsetConfig, spawner: Comlink.Remote<SandboxSpawner>) {
    this.#config = config;
    this.#spawner = spawner;
    this.#slots = new Semaphore(config.maxConcurrency);
  }

  /** Starts the policy worker and warms the pool; returns the tools the policy worker describes. */
  async start(): Promise<readonly ToolSpec[]> {
    const fresh = Array.from({ length: this.#config.poolSize }, () => this.#spawn());
    const [policy, ...pool] = await Promise.allSettled([this.#spawn(), ...fresh]);
    for (const started of pool)
      if (started?.status === 'fulfilled') this.#fresh.push(started.value.worker);
    if (policy?.status !== 'fulfilled') {
      await this.dispose();
      throw policy?.reason ?? new Error('No worker started.');
    }
    this.#policyConnection = policy.value.worker;
    this.#policy = Promise.resolve(policy.value.worker);
    // Pool workers that failed to start are retried in the background.
    this.#refill();
    return parseToolSpecs(policy.value.tools, this.#config.name);
  }

  async check(request: ToolCallRequest, timeoutMs: number): Promise<unknown> {
    let policy: SandboxConnection;
    try {
      policy = await this.#policyWorker();
    } catch (error) {
      return this.#startFailure(error);
    }
    const answer = await waitFor(policy.check(request), { timeoutMs });
    if (answer.outcome === 'settled' && policy.violation === undefined) return answer.value;
    // A policy worker that hangs or misbehaves is replaced; the checks it held fail with it.
    this.#replacePolicy(policy);
    return answer.outcome === 'settled'
      ? answer.value
      : timedOut(
          request.toolName,
          timeoutMs,
          'its schema or approval rule did not answer, so its worker was killed',
        );
  }

  async execute(
    request: ToolCallRequest,
    timeoutMs: number,
    scope: CallScope,
    onToolCall?: NestedToolCall,
  ): Promise<unknown> {
    const key = this.#scopeKey(request, scope);
    const callKey = callKeyOf(request.callId, scope);
    const call: CallInFlight = { key, cancel: new AbortController(), worker: undefined };
    this.#calls.set(callKey, call);
    const release = await this.#slots.acquire();
    try {
      // A call cancelled while it waited for a slot or a worker never runs.
      if (call.cancel.signal.aborted) return toolCancelled(request.toolName);
      const worker = await this.#acquire(key);
      call.worker = worker;
      if (call.cancel.signal.aborted) {
        this.#release(worker, key);
        return toolCancelled(request.toolName);
      }
      const answer = worker.execute(request, onToolCall);
      // The run's abort wins over a deadline that passed at the same moment.
      const onTime = await waitFor(answer, { timeoutMs, signal: call.cancel.signal });
      if (onTime.outcome === 'settled') {
        this.#release(worker, key);
        return onTime.value;
      }
      // Past its deadline, or its run was aborted: the tool's signal fires, and if it has
      // not stopped when the grace is over, its worker goes.
      worker.cancel(request.callId);
      const late = await waitFor(answer, { timeoutMs: this.#config.graceMs });
      const ended = onTime.outcome === 'aborted' ? toolCancelled(request.toolName) : undefined;
      if (late.outcome !== 'settled') {
        await this.#kill(worker);
        return ended ?? timedOut(request.toolName, timeoutMs, 'its worker was killed');
      }
      this.#release(worker, key);
      return ended ?? timedOut(request.toolName, timeoutMs, 'it was cancelled');
    } catch (error) {
      return this.#startFailure(error);
    } finally {
      release();
      this.#calls.delete(callKey);
      this.#callSettled(key);
    }
  }

  /** Cancels a call as its deadline would: signal now, kill after `graceMs`; one not started yet never runs. */
  cancel(callId: string, scope: CallScope): void {
    this.#calls.get(callKeyOf(callId, scope))?.cancel.abort();
  }

  /** A run ended: with `reuse: 'run'`, the workers that served it are stopped, now or when its last call settles. */
  endRun(scope: CallScope): void {
    if (this.#config.reuse !== 'run') return;
    for (const worker of this.#bound.get(scope.runId) ?? []) void this.#kill(worker);
    this.#bound.delete(scope.runId);
    if (this.#hasCallsOf(scope.runId)) this.#ending.add(scope.runId);
  }

  /** Kills every worker of the toolset; resolves once the page has terminated them. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    const everyWorker = [
      ...this.#fresh,
      ...[...this.#bound.values()].flat(),
      ...[...this.#calls.values()].flatMap(({ worker }) => (worker ? [worker] : [])),
    ];
    const policy = this.#policy;
    this.#policy = undefined;
    this.#policyConnection = undefined;
    await Promise.all([
      ...everyWorker.map((worker) => this.#kill(worker)),
      policy?.then(
        (worker) => this.#kill(worker),
        () => undefined,
      ),
    ]);
  }

  /** Where a call's worker may come from: its own call, its run, or its conversation. */
  #scopeKey(request: ToolCallRequest, scope: CallScope): string {
    switch (this.#config.reuse) {
      case 'call':
        return `call:${callKeyOf(request.callId, scope)}`;
      case 'run':
        return scope.runId;
      case 'conversation':
        return `conversation:${scope.conversationId}`;
    }
  }

  /** An idle worker of the same scope, else a fresh one, else one the pool is starting, else a new one. */
  async #acquire(key: string): Promise<SandboxConnection> {
    const bound = this.#bound.get(key);
    const reused = bound?.pop();
    if (bound?.length === 0) this.#bound.delete(key);
    if (reused) return reused;
    const fresh = this.#fresh.pop();
    if (fresh) {
      this.#refill();
      return fresh;
    }
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

  /** A worker whose call settled: kept for its scope, or stopped if it may serve no more. */
  #release(worker: SandboxConnection, key: string): void {
    const spent =
      this.#config.reuse === 'call' ||
      worker.violation !== undefined ||
      this.#ending.has(key) ||
      this.#disposed;
    if (spent) {
      void this.#kill(worker);
      return;
    }
    const bound = this.#bound.get(key) ?? [];
    // Re-inserted last: the map's order is the order in which scopes were last used.
    this.#bound.delete(key);
    this.#bound.set(key, [...bound, worker]);
    this.#trimBound();
  }

  /** Whether calls of scope `key` are in flight. */
  #hasCallsOf(key: string): boolean {
    return [...this.#calls.values()].some((call) => call.key === key);
  }

  /**
   * One call of scope `key` settled. The last one of an ended run takes the run's workers
   * with it; the last one of a burst leaves its scope one idle worker (the one used last),
   * so a burst's extra workers do not outlive it and the toolset shrinks back to its pool.
   */
  #callSettled(key: string): void {
    if (this.#hasCallsOf(key)) return;
    const idle = this.#bound.get(key) ?? [];
    if (this.#ending.delete(key)) {
      for (const worker of idle) void this.#kill(worker);
      this.#bound.delete(key);
      return;
    }
    for (const worker of idle.slice(0, -1)) void this.#kill(worker);
  }

  /** Idle bound workers beyond `maxConcurrency` are stopped, least recently used scope first. */
  #trimBound(): void {
    let idle = [...this.#bound.values()].reduce((sum, workers) => sum + workers.length, 0);
    for (const [key, workers] of this.#bound) {
      if (idle <= this.#config.maxConcurrency) return;
      this.#bound.delete(key);
      for (const worker of workers) void this.#kill(worker);
      idle -= workers.length;
    }
  }

  #policyWorker(): Promise<SandboxConnection> {
    if (this.#disposed) throw stopped();
    if (!this.#policy) {
      const starting = this.#spawn().then(({ worker }) => {
        if (this.#policy === starting) this.#policyConnection = worker;
        return worker;
      });
      this.#policy = starting;
      // A policy worker that failed to start is started again by the next check.
      starting.catch(() => {
        if (this.#policy === starting) this.#policy = undefined;
      });
    }
    return this.#policy;
  }

  /** Stops the policy worker; the next check starts a new one (its tools were recorded at start). */
  #replacePolicy(policy: SandboxConnection): void {
    if (this.#policyConnection === policy) {
      this.#policy = undefined;
      this.#policyConnection = undefined;
    }
    void this.#kill(policy, false);
  }

  /**
   * Starts a worker and waits until it has described its tools, so a cold start is
   * never charged to a call's deadline; one that does not answer in `startTimeoutMs` is
   * killed (and the kill settled) before the failure is reported.
   */
  async #spawn(): Promise<{ worker: SandboxConnection; tools: unknown }> {
    if (this.#disposed) throw stopped();
    const { workerId, port, status } = await this.#spawner.spawn(this.#config.name);
    const worker = new SandboxConnection(workerId, port, (broken) => this.#onViolation(broken));
    const loading = loadFailure(status);
    // Disposed while the page started it: the worker goes at once rather than outlive its toolset.
    if (this.#disposed) {
      loading.stop();
      await this.#kill(worker, false);
      throw stopped();
    }
    // A script that cannot load ends the wait at once; a silent worker, at startTimeoutMs.
    const answer = await waitFor(Promise.race([worker.describe(), loading.failed]), {
      timeoutMs: this.#config.startTimeoutMs,
    }).finally(loading.stop);
    const described = describedTools(
      this.#config,
      answer.outcome === 'settled' ? answer.value : undefined,
    );
    if ('failure' in described) {
      // No refill: a worker that cannot start would only be started again and again.
      await this.#kill(worker, false);
      throw described.failure;
    }
    return { worker, tools: described.tools };
  }

  /** A worker broke the protocol: an idle one goes at once; a busy one when its call settles. */
  #onViolation(worker: SandboxConnection): void {
    if (worker === this.#policyConnection) {
      this.#replacePolicy(worker);
      return;
    }
    const busy = [...this.#calls.values()].some((call) => call.worker === worker);
    if (!busy) void this.#kill(worker);
  }

  /** Stops a worker and forgets it; resolves once the page has terminated it. */
  async #kill(worker: SandboxConnection, refill = true): Promise<void> {
    const fresh = this.#fresh.indexOf(worker);
    if (fresh >= 0) this.#fresh.splice(fresh, 1);
    for (const [key, workers] of this.#bound) {
      const kept = workers.filter((bound) => bound !== worker);
      if (kept.length === 0) this.#bound.delete(key);
      else if (kept.length !== workers.length) this.#bound.set(key, kept);
    }
    worker.close();
    if (refill) this.#refill();
    // Best effort: when the page is gone its workers went with it.
    await this.#spawner.kill(worker.workerId).catch(() => undefined);
  }

  /** Starts fresh workers in the background until `poolSize` of them are ready or starting. */
  #refill(): void {
    const unclaimed = [...this.#warming].filter((warming) => !warming.claimed).length;
    const missing = this.#config.poolSize - (this.#fresh.length + unclaimed);
    for (let i = 0; i < missing && !this.#disposed; i++) {
      const warming: Warming = {
        worker: this.#spawn().then(({ worker }) => worker),
        claimed: false,
      };
      this.#warming.add(warming);
      warming.worker.then(
        (worker) => {
          this.#warming.delete(warming);
          if (this.#disposed) void this.#kill(worker);
          else if (!warming.claimed) this.#fresh.push(worker);
        },
        // A failed warm-up is not fatal: the next call starts a worker and reports the error.
        () => this.#warming.delete(warming),
      );
    }
  }

  #startFailure(error: unknown) {
    return toolFailure(
      'tool-crashed',
      `Toolset "${this.#config.name}" could not start a worker: ${describeThrown(error)}`,
    );
  }
}

/** A call from when it asks for a worker until it settles. */
interface CallInFlight {
  readonly key: string;
  readonly cancel: AbortController;
  /** The worker serving it, once it has one. */
  worker: SandboxConnection | undefined;
}

function stopped(): AirlockError {
  return new AirlockError('agent-disposed', 'The toolset was stopped.');
}

/** A call's key among all runs: model-chosen call ids repeat across runs. */
function callKeyOf(callId: string, scope: CallScope): string {
  return `${scope.runId}\u0000${callId}`;
}
