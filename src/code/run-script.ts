import type {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { ToolFault } from '../tools/tool-fault';

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

/** The script is the body of an async function, so it may `await` and `return`. Kept on one line: line numbers stay the model's. */
const PREFIX = '(async () => {';
const SUFFIX = '\n})()';
const FILE = 'script.js';

/**
 * Runs model-written JavaScript in a fresh QuickJS runtime and context of its own, under
 * a memory limit, a stack limit and an interrupt at its deadline. The context holds the
 * language and nothing of the worker: no `fetch`, no timers, no `import` (there is no
 * module loader), only `console` and the granted `tools`. Fails with a `ToolFault`
 * (`tool-memory-limit`, `tool-timeout`, `tool-failed` with line and column).
 */
export async function runScript(
  quickjs: QuickJSWASMModule,
  code: string,
  limits: ScriptLimits,
  host: ScriptHost,
): Promise<ScriptOutput> {
  const deadline = Date.now() + limits.timeoutMs;
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(limits.stackBytes);
  runtime.setInterruptHandler(() => Date.now() > deadline || host.signal.aborted);
  const refusedBefore = refusedGrowths(quickjs.getWasmMemory());
  const context = runtime.newContext();
  const script = new Script(
    runtime,
    context,
    limits,
    host,
    () => refusedGrowths(quickjs.getWasmMemory()) > refusedBefore,
  );
  try {
    return await script.run(code, deadline);
  } finally {
    script.dispose();
  }
}

/** One script's runtime, context, handles and host calls in flight; everything released in `dispose`. */
class Script {
  readonly #runtime: QuickJSRuntime;
  readonly #vm: QuickJSContext;
  readonly #limits: ScriptLimits;
  readonly #host: ScriptHost;
  /** Whether the WebAssembly memory refused to grow while the script ran (it hit its cap). */
  readonly #heapFull: () => boolean;
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
    heapFull: () => boolean,
  ) {
    this.#heapFull = heapFull;
    this.#runtime = runtime;
    this.#vm = vm;
    this.#limits = limits;
    this.#host = host;
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
    }
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
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const outcome = await new Promise<'answer' | 'deadline' | 'aborted'>((resolve) => {
        this.#wake = () => resolve('answer');
        timer = setTimeout(() => resolve('deadline'), Math.max(0, deadline - Date.now()));
        onAbort = () => resolve('aborted');
        this.#host.signal.addEventListener('abort', onAbort);
        if (this.#host.signal.aborted) resolve('aborted');
      });
      if (outcome === 'deadline') throw this.#timedOut();
      if (outcome === 'aborted') throw new ToolFault('tool-failed', 'The run was aborted.');
    } finally {
      this.#wake = undefined;
      clearTimeout(timer);
      if (onAbort) this.#host.signal.removeEventListener('abort', onAbort);
    }
  }

  #installConsole(): void {
    const vm = this.#vm;
    const consoleObject = this.#keep(vm.newObject());
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const log = this.#keep(
        vm.newFunction(level, (...args) => {
          this.#log(args.map((arg) => this.#describe(arg)).join(' '));
        }),
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
        vm.newFunction(name, (argsHandle) => {
          const args: unknown = argsHandle === undefined ? {} : vm.dump(argsHandle);
          const deferred = vm.newPromise();
          this.#pending.add(deferred);
          void this.#host.callTool(name, args).then((answer) => this.#settle(deferred, answer));
          return deferred.handle;
        }),
      );
      vm.setProp(tools, name, call);
    }
    vm.setProp(vm.global, 'tools', tools);
  }

  /** Hands a host answer to the script: the output as a value, a failure as an Error with a `code`. */
  #settle(deferred: QuickJSDeferredPromise, answer: HostAnswer): void {
    // A script that already ended released its promises; the late answer is dropped.
    if (!this.#pending.delete(deferred)) return;
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
    this.#wake?.();
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
    if (typeof value === 'string') return value;
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
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
    const error = this.#vm.dump(errorHandle) as unknown;
    const { name, message, stack } = readError(error);
    // With the heap at its cap, QuickJS may not even have room for its error and throws null.
    const heapFull = error === null && this.#heapFull();
    if ((name === 'InternalError' && message === 'out of memory') || heapFull) {
      return new ToolFault(
        'tool-memory-limit',
        `The script went over its memory limit of ${this.#limits.memoryBytes} bytes and was stopped.`,
      );
    }
    if (name === 'InternalError' && message === 'interrupted') {
      return this.#host.signal.aborted
        ? new ToolFault('tool-failed', 'The run was aborted.')
        : this.#timedOut();
    }
    const where = position(stack);
    const at = where ? ` at line ${where.line}, column ${where.column}` : '';
    if (whileParsing || name === 'SyntaxError') {
      return new ToolFault('tool-failed', `${name}${at}: ${message}`);
    }
    if (name === 'InternalError' && message === 'stack overflow') {
      return new ToolFault(
        'tool-failed',
        `The script overflowed its stack of ${this.#limits.stackBytes} bytes${at}.`,
      );
    }
    return new ToolFault('tool-failed', `The script threw ${name}${at}: ${message}`);
  }

  #timedOut(): ToolFault {
    return new ToolFault(
      'tool-timeout',
      `The script did not finish within ${this.#limits.timeoutMs} ms and was interrupted.`,
    );
  }

  #keep(handle: QuickJSHandle): QuickJSHandle {
    this.#handles.push(handle);
    return handle;
  }

  #take(handle: QuickJSHandle): QuickJSHandle {
    return this.#keep(handle);
  }
}

/** Name, message and stack of whatever the script threw (an Error, or any value). */
function readError(error: unknown): { name: string; message: string; stack: string } {
  if (typeof error === 'object' && error !== null) {
    const record = error as Record<string, unknown>;
    return {
      name: typeof record.name === 'string' ? record.name : 'Error',
      message: typeof record.message === 'string' ? record.message : safeJson(error),
      stack: typeof record.stack === 'string' ? record.stack : '',
    };
  }
  return { name: 'a value', message: safeJson(error), stack: '' };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Line and column in the model's code of the first stack frame in the script. */
function position(stack: string): { line: number; column: number } | undefined {
  const match = /script\.js:(\d+):(\d+)/.exec(stack);
  if (!match) return undefined;
  const line = Number(match[1]);
  const column = Number(match[2]);
  // The wrapper shares the first line with the model's code.
  return { line, column: line === 1 ? Math.max(1, column - PREFIX.length) : column };
}

/** How often each watched WebAssembly memory refused to grow. */
const refusals = new WeakMap<WebAssembly.Memory, { count: number }>();

/**
 * Counts the times `memory` refuses to grow past its maximum, which is how an allocation
 * fails at the heap's cap (QuickJS then throws "out of memory", or null when it has no
 * room left for an error).
 */
export function watchGrowth(memory: WebAssembly.Memory): void {
  const counter = { count: 0 };
  refusals.set(memory, counter);
  const grow = memory.grow.bind(memory);
  memory.grow = (delta: number) => {
    try {
      return grow(delta);
    } catch (error) {
      counter.count += 1;
      throw error;
    }
  };
}

function refusedGrowths(memory: WebAssembly.Memory): number {
  return refusals.get(memory)?.count ?? 0;
}
