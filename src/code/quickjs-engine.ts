// The release build with its WebAssembly inlined: no .wasm file for the app to serve.
import variant from '@jitl/quickjs-singlefile-browser-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { describeThrown } from '../tools/run-tool';
import { ToolFault } from '../tools/tool-fault';

// QuickJS checks its stack against a limit of its own, on the WebAssembly module's stack (5
// MiB in this build). Every WebAssembly call also takes room on the browser's own stack, and
// some C functions (the parser's above all) take far more there than on QuickJS's: a script
// can run the browser's stack out first, whatever the limit. The browser then throws its
// own overflow (RangeError, or InternalError in Firefox) through the WebAssembly frames,
// which unwinds them without their epilogues: the module's stack pointer is left where it
// was, and the runtime in the middle of whatever it was doing (its objects half linked,
// freeing it trips an assertion that aborts). Such a module is not used again: the script
// ends with its documented error and the next one gets a fresh module.

const WASM_PAGE_BYTES = 65_536;
/** The memory QuickJS's WebAssembly module starts with (16 MiB), the runtime's own use included. */
const BASE_HEAP_PAGES = 256;

/**
 * The largest stack a script may be given: well below the module's own 5 MiB, so that
 * QuickJS's check always fires before the module's stack could overflow into its data.
 */
export const MAX_STACK_BYTES = 1024 * 1024;

/** A QuickJS module as one script gets it, with the means to take it out of service. */
export interface EngineLease {
  readonly module: QuickJSWASMModule;
  /** Whether the module was taken out of service (by this script or another one in it). */
  readonly retired: () => boolean;
  /** Takes the module out of service: its state can no longer be vouched for. */
  readonly retire: () => void;
}

/**
 * The QuickJS module of one code tool in one worker: loaded on first use, shared by the
 * scripts the worker runs, and replaced by a fresh one after a script broke it.
 */
export class QuickJsEngine {
  readonly #heapPages: number;
  #current: { readonly loading: Promise<QuickJSWASMModule>; retired: boolean } | undefined;

  /** An engine whose module may hold `memoryBytes` of the scripts' own besides its start. */
  constructor(memoryBytes: number) {
    this.#heapPages = BASE_HEAP_PAGES + Math.ceil(memoryBytes / WASM_PAGE_BYTES);
  }

  /** The module the next script runs in. A failed load is tried again by the next script. */
  async lease(): Promise<EngineLease> {
    if (!this.#current) {
      const current = { loading: loadQuickJs(this.#heapPages), retired: false };
      this.#current = current;
      current.loading.catch(() => {
        if (this.#current === current) this.#current = undefined;
      });
    }
    const current = this.#current;
    const module = await current.loading;
    return {
      module,
      retired: () => current.retired,
      retire: () => {
        current.retired = true;
        if (this.#current === current) this.#current = undefined;
      },
    };
  }
}

/**
 * Whether `error` is the browser's own stack overflow: a RangeError in V8 and
 * JavaScriptCore, SpiderMonkey's `InternalError` ("too much recursion") in Firefox.
 */
export function isHostStackOverflow(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    (error instanceof RangeError && /call stack/i.test(error.message)) ||
    (error.name === 'InternalError' && /recursion/i.test(error.message))
  );
}

/**
 * The QuickJS module, after checking that this realm may compile WebAssembly: a CSP without
 * `'wasm-unsafe-eval'` forbids it, and then the toolset is unavailable, never run another way.
 */
async function loadQuickJs(heapPages: number): Promise<QuickJSWASMModule> {
  try {
    // The smallest valid module: compiling it asks the CSP and nothing else.
    new WebAssembly.Module(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
  } catch (error) {
    throw new ToolFault(
      'tool-failed',
      `WebAssembly cannot be compiled here, so code cannot run; the Content-Security-Policy must allow 'wasm-unsafe-eval' in script-src (${describeThrown(error)}).`,
    );
  }
  // QuickJS's own limit refuses any one allocation past it, but this build cannot measure
  // the blocks it got (no malloc_usable_size) and undercounts what a script keeps. A
  // WebAssembly memory that cannot grow past the cap makes malloc fail there instead.
  const wasmMemory = new WebAssembly.Memory({ initial: BASE_HEAP_PAGES, maximum: heapPages });
  watchGrowth(wasmMemory);
  try {
    return await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory }));
  } catch (error) {
    throw new ToolFault('tool-failed', `QuickJS could not be started: ${describeThrown(error)}`);
  }
}

/** How often each watched WebAssembly memory refused to grow. */
const refusals = new WeakMap<WebAssembly.Memory, { count: number }>();

/**
 * Counts the times `memory` refuses to grow past its maximum, which is how an allocation
 * fails at the heap's cap (QuickJS then throws "out of memory", or null when it has no
 * room left for an error).
 */
function watchGrowth(memory: WebAssembly.Memory): void {
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

/** How often the module's memory refused to grow so far. */
export function refusedGrowths(module: QuickJSWASMModule): number {
  return refusals.get(module.getWasmMemory())?.count ?? 0;
}
