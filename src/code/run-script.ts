import type {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
} from 'quickjs-emscripten-core';
import { waitFor } from '../timing/wait';
import { ToolFault } from '../tools/tool-fault';
import { type EngineLease, refusedGrowths } from './quickjs-engine';
import {
  brokenEngineFault,
  safeJson,
  scriptFault,
  sharedEngineFault,
  timedOut,
} from './script-faults';

/** The limits one script runs under. */
export interface ScriptLimits {
  /** Heap of the script's QuickJS runtime, in bytes. */
  readonly memoryBytes: number;
  /** Stack of the script's QuickJS runtime, in bytes. */
  readonly stackBytes: number;
  /** From the start of the script to its result, host tool calls included. */
  readonly timeoutMs: number;
  /** Characters of `console.log` output kept; later lines are dropped with a notice. */
  readonly maxLogChars: number;
}

/** A host tool call's answer, as the script's awaited promise settles with it. */
export type HostAnswer =
  | { readonly ok: true; readonly output: unknown }
  | { readonly ok: false; readonly code: string; readonly message: string };

/** What a script produced: its return value (absent for `undefined`) and what it logged. */
export interface ScriptOutput {
  readonly result?: unknown;
  readonly logs: readonly string[];
}

/** What one script may reach besides the language itself. */
export interface ScriptHost {
  /** Names of the functions on the script's `tools` object. */
  readonly toolNames: readonly string[];
  /** Runs one of them; never rejects. */
  readonly callTool: (toolName: string, args: unknown) => Promise<HostAnswer>;
  /** Aborted when the run is aborted: the script is interrupted. */
  readonly signal: AbortSignal;
}

/** What a script sees of the engine it runs in. */
interface EngineWatch {
  /** Whether the WebAssembly memory refused to grow while the script ran (it hit its cap). */
  readonly heapFull: () => boolean;
  /** Whether the engine was taken out of service (another script broke it). */
  readonly retired: () => boolean;
}

/** The script is the body of an async function, so it may `await` and `return`. Kept on one line: line numbers stay the model's. */
const PREFIX = '(async () => {';
const SUFFIX = '\n})()';
const FILE = 'script.js';

/**
 * Runs model-written JavaScript in a fresh QuickJS runtime and context of its own, under
 * a memory limit, a stack limit and an interrupt at its deadline. The context holds the
 * language and nothing of the worker: no `fetch`, no timers, no `import` (there is no
 * module loader), only `console` and the granted `tools`. Fails with a `ToolFault`
 * (`tool-memory-limit`, `tool-timeout`, `tool-failed` with line and column). A script that
 * broke its engine (the browser's stack ran out inside it) fails as `tool-failed` too, and
 * the engine is retired: its runtime is left as it is, and the next script gets a fresh one.
 */
export async function runScript(
  engine: EngineLease,
  code: string,
  limits: ScriptLimits,
  host: ScriptHost,
): Promise<ScriptOutput> {
  const deadline = Date.now() + limits.timeoutMs;
  const quickjs = engine.module;
  let script: Script | undefined;
  let outcome: { readonly output: ScriptOutput } | { readonly error: unknown };
  try {
    const runtime = quickjs.newRuntime();
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(limits.stackBytes);
    const refusedBefore = refusedGrowths(quickjs);
    const started = new Script(runtime, runtime.newContext(), limits, host, {
      heapFull: () => refusedGrowths(quickjs) > refusedBefore,
      retired: engine.retired,
    });
    script = started;
    // A broken engine stops the script at QuickJS's next check, as a deadline would.
    runtime.setInterruptHandler(
      () =>
        Date.now() > deadline ||
        host.signal.aborted ||
        started.broken !== undefined ||
        engine.retired(),
    );
    outcome = { output: await started.run(code, deadline) };
  } catch (error) {
    outcome = { error };
  }
  // A failure that is not one of the script's own faults came from inside the engine.
  const broken =
    script?.broken ??
    ('error' in outcome && !(outcome.error instanceof ToolFault)
      ? { error: outcome.error }
      : undefined);
  if (broken) {
    engine.retire();
    throw brokenEngineFault(broken.error, limits.stackBytes);
  }
  // Another script broke the engine while this one waited for a tool: its state is suspect too.
  if (engine.retired()) throw sharedEngineFault();
  try {
    script?.dispose();
  } catch (error) {
    // Freeing the runtime tripped QuickJS's own checks: it was not left whole after all.
    engine.retire();
    throw brokenEngineFault(error, limits.stackBytes);
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.output;
}

/** One script's runtime, context, handles and host calls in flight; everything released in `dispose`. */
class Script {
  readonly #runtime: QuickJSRuntime;
  readonly #vm: QuickJSContext;
  readonly #limits: ScriptLimits;
  readonly #host: ScriptHost;
  readonly #engine: EngineWatch;
  /** The host error that broke the engine inside one of the script's host calls, if one did. */
  #broken: { readonly error: unknown } | undefined;
  readonly #handles: QuickJSHandle[] = [];
  readonly #pending = new Set<QuickJSDeferredPromise>();
  readonly #logs: string[] = [];
  #logChars = 0;
  /** Resolves when a host call settles, to wake the loop that runs the script's jobs. */
  #wake: (() => void) | undefined;

  constructor(
    runtime: QuickJSRuntime,
    vm: QuickJSContext,
    limits: ScriptLimits,
    host: ScriptHost,
    engine: EngineWatch,
  ) {
    this.#engine = engine;
    this.#runtime = runtime;
    this.#vm = vm;
    this.#limits = limits;
    this.#host = host;
  }

  /**
   * The host error that broke the engine while QuickJS called back into the host (to log,
   * call a tool, or settle a tool's answer); QuickJS went on, but its state is suspect.
   */
  get broken(): { readonly error: unknown } | undefined {
    return this.#broken;
  }

  async run(code: string, deadline: number): Promise<ScriptOutput> {
    const vm = this.#vm;
    this.#installConsole();
    this.#installTools();
    // Taken before the script runs, so a script that replaces JSON cannot change how its result is read.
    const json = this.#keep(vm.getProp(vm.global, 'JSON'));
    const stringify = this.#keep(vm.getProp(json, 'stringify'));
    const evaluated = vm.evalCode(`${PREFIX}${code}${SUFFIX}`, FILE);
    if (evaluated.error) throw this.#fault(this.#take(evaluated.error), true);
    const promise = this.#keep(evaluated.value);
    for (;;) {
      const jobs = this.#runtime.executePendingJobs();
      // A job's own error also rejects the script's promise; the handle is only released here.
      if (jobs.error) jobs.error.dispose();
      this.#checkEngine();
      const state = vm.getPromiseState(promise);
      if (state.type === 'rejected') throw this.#fault(this.#keep(state.error), false);
      if (state.type === 'fulfilled') {
        // `notAPromise` states hand back the handle itself; only a fresh one is released.
        const value = state.notAPromise ? state.value : this.#keep(state.value);
        return { ...this.#serialize(stringify, value), logs: this.#logs };
      }
      if (this.#pending.size === 0) {
        throw new ToolFault(
          'tool-failed',
          'The script awaits something that never settles (there are no timers, and `import` has no modules to load).',
        );
      }
      await this.#nextHostAnswer(deadline);
      this.#checkEngine();
    }
  }

  /** Stops the script once its engine broke; `runScript` then says why. */
  #checkEngine(): void {
    if (this.#broken || this.#engine.retired())
      throw new ToolFault('tool-failed', 'The script was stopped: its engine broke.');
  }

  /**
   * A host function for the script that records a failure inside it (the browser's stack
   * running out in a QuickJS call it made, most likely) before QuickJS turns it into an
   * exception the script could catch: the script then ends as a broken engine's.
   */
  #hostFunction(body: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) {
    return (...args: QuickJSHandle[]): QuickJSHandle | undefined => {
      try {
        return body(...args);
      } catch (error) {
        this.#broken ??= { error };
        throw error;
      }
    };
  }

  /** Releases every handle, then the context and the runtime. */
  dispose(): void {
    for (const deferred of this.#pending) deferred.dispose();
    this.#pending.clear();
    for (const handle of this.#handles.reverse()) if (handle.alive) handle.dispose();
    this.#vm.dispose();
    this.#runtime.dispose();
  }

  /** Waits for a host call to settle; at the deadline or an abort, the script ends. */
  async #nextHostAnswer(deadline: number): Promise<void> {
    const answered = new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
    try {
      const waited = await waitFor(answered, {
        signal: this.#host.signal,
        timeoutMs: Math.max(0, deadline - Date.now()),
      });
      if (waited.outcome === 'timed-out') throw timedOut(this.#limits.timeoutMs);
      if (waited.outcome === 'aborted') throw new ToolFault('tool-failed', 'The run was aborted.');
    } finally {
      this.#wake = undefined;
    }
  }

  #installConsole(): void {
    const vm = this.#vm;
    const consoleObject = this.#keep(vm.newObject());
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const log = this.#keep(
        vm.newFunction(
          level,
          this.#hostFunction((...args) => {
            this.#log(args.map((arg) => this.#describe(arg)).join(' '));
            return undefined;
          }),
        ),
      );
      vm.setProp(consoleObject, level, log);
    }
    vm.setProp(vm.global, 'console', consoleObject);
  }

  #installTools(): void {
    const vm = this.#vm;
    const tools = this.#keep(vm.newObject());
    for (const name of this.#host.toolNames) {
      const call = this.#keep(
        vm.newFunction(
          name,
          this.#hostFunction((argsHandle) => {
            const args: unknown = argsHandle === undefined ? {} : vm.dump(argsHandle);
            const deferred = vm.newPromise();
            this.#pending.add(deferred);
            void this.#host.callTool(name, args).then((answer) => this.#settle(deferred, answer));
            return deferred.handle;
          }),
        ),
      );
      vm.setProp(tools, name, call);
    }
    vm.setProp(vm.global, 'tools', tools);
  }

  /** Hands a host answer to the script: the output as a value, a failure as an Error with a `code`. */
  #settle(deferred: QuickJSDeferredPromise, answer: HostAnswer): void {
    // A script that already ended released its promises; the late answer is dropped.
    if (!this.#pending.delete(deferred)) return;
    try {
      this.#answer(deferred, answer);
    } catch (error) {
      // Outside the script's own calls: nothing else would hear of it, so the loop is woken.
      this.#broken ??= { error };
    }
    this.#wake?.();
  }

  #answer(deferred: QuickJSDeferredPromise, answer: HostAnswer): void {
    const vm = this.#vm;
    if (answer.ok) {
      const value = this.#fromJson(answer.output);
      deferred.resolve(value);
      value.dispose();
    } else {
      const error = vm.newError({ name: 'ToolError', message: answer.message });
      const code = vm.newString(answer.code);
      vm.setProp(error, 'code', code);
      code.dispose();
      deferred.reject(error);
      error.dispose();
    }
    deferred.dispose();
  }

  /** A host value rebuilt inside the context through JSON, so nothing but data crosses. */
  #fromJson(value: unknown): QuickJSHandle {
    const vm = this.#vm;
    const text = JSON.stringify(value);
    if (text === undefined) return vm.undefined;
    const parsed = vm.evalCode(`(${text})`, 'tool-output.json');
    if (parsed.error) {
      parsed.error.dispose();
      return vm.undefined;
    }
    return parsed.value;
  }

  #log(line: string): void {
    if (this.#logChars >= this.#limits.maxLogChars) return;
    const room = this.#limits.maxLogChars - this.#logChars;
    const kept = line.length > room ? `${line.slice(0, room)}\n[console output truncated]` : line;
    this.#logChars += line.length;
    this.#logs.push(kept);
  }

  /** A logged value as text: strings as they are, anything else as QuickJS's dump of it. */
  #describe(handle: QuickJSHandle): string {
    const value: unknown = this.#vm.dump(handle);
    return typeof value === 'string' ? value : safeJson(value);
  }

  /** The script's return value, through the context's own `JSON.stringify` (under its limits). */
  #serialize(stringify: QuickJSHandle, value: QuickJSHandle): { result?: unknown } {
    const vm = this.#vm;
    const text = vm.callFunction(stringify, vm.undefined, value);
    if (text.error) throw this.#fault(this.#take(text.error), false);
    const json = this.#keep(text.value);
    if (vm.typeof(json) !== 'string') return {};
    return { result: JSON.parse(vm.getString(json)) as unknown };
  }

  /** The typed fault for an error the script ended with. */
  #fault(errorHandle: QuickJSHandle, whileParsing: boolean): ToolFault {
    return scriptFault(this.#vm.dump(errorHandle), {
      ...this.#limits,
      whileParsing,
      heapFull: this.#engine.heapFull(),
      aborted: this.#host.signal.aborted,
      prefixChars: PREFIX.length,
    });
  }

  #keep(handle: QuickJSHandle): QuickJSHandle {
    this.#handles.push(handle);
    return handle;
  }

  #take(handle: QuickJSHandle): QuickJSHandle {
    return this.#keep(handle);
  }
}
