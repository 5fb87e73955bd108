// WebMCP's `document.modelContext`, kept to the draft's surface (webmachinelearning/webmcp,
// index.bs at 0b676d2, 2026-06-24) and to the consumer side Chromium 156 ships behind
// `--enable-features=WebMCP` (`getTools()`, `executeTool(tool, input, { signal })`).
import { AirlockError } from '../errors/airlock-error';

/** What a page registers: the draft's `ModelContextTool`. */
export interface ModelContextTool {
  /** 1 to 128 of ASCII letters, digits, `_`, `-` and `.`; unique in its document. */
  readonly name: string;
  /** A label for user interfaces. */
  readonly title?: string;
  /** Tells an agent when and how to use the tool; not empty. */
  readonly description: string;
  /** A JSON Schema object of the input. */
  readonly inputSchema?: object;
  /** Runs the tool; what it returns (or resolves with) is the result, as JSON. */
  execute(input: Record<string, unknown>): unknown;
  readonly annotations?: ToolAnnotations;
}

/** Hints about a tool's behaviour: hints, never promises. */
export interface ToolAnnotations {
  /** The tool reads and changes nothing. */
  readonly readOnlyHint?: boolean;
  /** The tool's output holds data its author does not vouch for. */
  readonly untrustedContentHint?: boolean;
}

/** The draft's `ModelContextRegisterToolOptions`. */
export interface RegisterToolOptions {
  /** Unregisters the tool when aborted. */
  readonly signal?: AbortSignal;
  /** Origins of other documents in the tree that may see and run the tool. */
  readonly exposedTo?: readonly string[];
}

/** A tool as an agent on the page lists it (Chromium's `RegisteredTool`). */
export interface RegisteredTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema?: object;
  readonly annotations?: Required<ToolAnnotations>;
  /** The origin of the document that registered it. */
  readonly origin: string;
  /** The window of that document. */
  readonly window: Window;
}

/** `document.modelContext`: where a page registers tools and an agent on it lists and runs them. */
export interface ModelContext extends EventTarget {
  registerTool(tool: ModelContextTool, options?: RegisterToolOptions): Promise<void>;
  /** The tools this document may see: its own, and those of frames of its tree exposed to it. */
  getTools(): Promise<RegisteredTool[]>;
  /**
   * Runs a listed tool with an input object; resolves with its result as JSON text. A tool
   * no longer registered, or one that threw, rejects with an `UnknownError`.
   */
  executeTool(
    tool: RegisteredTool,
    input: object,
    options?: { readonly signal?: AbortSignal },
  ): Promise<string | null>;
  ontoolchange: ((event: Event) => unknown) | null;
}

interface Entry {
  readonly tool: RegisteredTool;
  readonly execute: (input: Record<string, unknown>) => unknown;
  /** The origins it is exposed to besides its own. */
  readonly exposedTo: readonly string[];
}

const NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** Each polyfilled context's tools, by the context (never reachable from the page). */
const TOOLS = new WeakMap<object, Map<string, Entry>>();

const domError = (name: string, message: string) => new DOMException(message, name);

/** `registerTool`'s checks, in the draft's order; a rejected promise for the first that fails. */
function describe(
  tool: unknown,
  options: RegisterToolOptions,
  own: Map<string, Entry>,
  win: Window,
): Entry {
  if (typeof tool !== 'object' || tool === null) throw new TypeError('The tool must be an object.');
  const given = tool as Record<string, unknown>;
  for (const field of ['name', 'description'] as const) {
    if (typeof given[field] !== 'string')
      throw new TypeError(`The tool's ${field} must be a string.`);
  }
  if (typeof given.execute !== 'function')
    throw new TypeError("The tool's execute must be a function.");
  const name = given.name as string;
  const description = given.description as string;
  if (own.has(name)) throw domError('InvalidStateError', `A tool named "${name}" is registered.`);
  if (description === '') throw domError('InvalidStateError', 'The description is empty.');
  if (!NAME.test(name)) {
    throw domError(
      'InvalidStateError',
      'A name is 1 to 128 of ASCII letters, digits, "_", "-" and ".".',
    );
  }
  let inputSchema: object | undefined;
  if (given.inputSchema !== undefined) {
    if (typeof given.inputSchema !== 'object' || given.inputSchema === null) {
      throw new TypeError('The inputSchema must be an object.');
    }
    // Serialised as the draft says (a cycle throws here); kept as its own copy.
    const text = JSON.stringify(given.inputSchema) as string | undefined;
    if (text === undefined) throw new TypeError('The inputSchema does not serialise to JSON.');
    inputSchema = JSON.parse(text) as object;
  }
  const annotations = given.annotations as ToolAnnotations | undefined;
  const exposedTo = (options.exposedTo ?? []).map((origin) => trustworthyOrigin(origin));
  const title = given.title === undefined ? '' : String(given.title);
  return {
    tool: {
      name,
      title,
      description,
      ...(inputSchema ? { inputSchema } : {}),
      ...(annotations
        ? {
            annotations: {
              readOnlyHint: annotations.readOnlyHint === true,
              untrustedContentHint: annotations.untrustedContentHint === true,
            },
          }
        : {}),
      origin: win.origin,
      window: win,
    },
    execute: (given.execute as Entry['execute']).bind(tool),
    exposedTo,
  };
}

function trustworthyOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw domError('SecurityError', `"${text}" is not a URL.`);
  }
  const local = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(url.hostname);
  if (url.protocol !== 'https:' && url.protocol !== 'wss:' && !local) {
    throw domError('SecurityError', `"${url.origin}" is not a potentially trustworthy origin.`);
  }
  return url.origin;
}

/** The polyfilled contexts of a window and of the frames below it that it can reach. */
function contextsBelow(win: Window): ModelContext[] {
  const found: ModelContext[] = [];
  const visit = (frame: Window) => {
    try {
      const context = (frame.document as { modelContext?: ModelContext }).modelContext;
      if (context && TOOLS.has(context)) found.push(context);
    } catch {
      return; // A cross-origin frame: its tools are out of this polyfill's reach.
    }
    for (let index = 0; index < frame.frames.length; index += 1) {
      const child = frame.frames[index];
      if (child) visit(child);
    }
  };
  visit(win);
  return found;
}

function visibleTo(entry: Entry, origin: string): boolean {
  return entry.tool.origin === origin || entry.exposedTo.includes(origin);
}

function createModelContext(win: Window): ModelContext {
  const own = new Map<string, Entry>();
  const target = new EventTarget();
  let handler: ((event: Event) => unknown) | null = null;
  // Every polyfilled document of the tree that may see the tool hears of the change.
  const notify = (entry: Entry) => {
    for (const context of contextsBelow(win.top ?? win)) {
      if (visibleTo(entry, contextWindow(context).origin)) {
        context.dispatchEvent(new Event('toolchange'));
      }
    }
  };
  const methods = {
    registerTool(tool: ModelContextTool, options: RegisterToolOptions = {}): Promise<void> {
      try {
        if (options.signal?.aborted) return Promise.reject(options.signal.reason);
        const entry = describe(tool, options, own, win);
        own.set(entry.tool.name, entry);
        options.signal?.addEventListener(
          'abort',
          () => {
            if (own.get(entry.tool.name) !== entry) return;
            own.delete(entry.tool.name);
            notify(entry);
          },
          { once: true },
        );
        notify(entry);
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(error);
      }
    },
    async getTools(): Promise<RegisteredTool[]> {
      const origin = win.origin;
      return contextsBelow(win.top ?? win).flatMap((each) =>
        [...(TOOLS.get(each)?.values() ?? [])]
          .filter((entry) => visibleTo(entry, origin))
          .map((entry) => ({ ...entry.tool })),
      );
    },
    async executeTool(
      tool: RegisteredTool,
      input: object,
      options: { readonly signal?: AbortSignal } = {},
    ): Promise<string | null> {
      if (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string') {
        throw new TypeError('The tool must be one that getTools() listed.');
      }
      if (typeof input !== 'object' || input === null || Array.isArray(input)) {
        throw new TypeError('The input must be an object.');
      }
      const { signal } = options;
      signal?.throwIfAborted();
      const owner = contextsBelow(win.top ?? win).find(
        (each) => contextWindow(each) === tool.window,
      );
      const entry = owner ? TOOLS.get(owner)?.get(tool.name) : undefined;
      if (!entry || !visibleTo(entry, win.origin)) {
        throw domError('UnknownError', `No tool named "${tool.name}" is registered there.`);
      }
      const ran = (async () => {
        try {
          return await entry.execute(structuredClone(input) as Record<string, unknown>);
        } catch (error) {
          throw domError(
            'UnknownError',
            `The tool "${tool.name}" failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      })();
      const result = signal
        ? await new Promise((resolve, reject) => {
            const onAbort = () => reject(signal.reason);
            signal.addEventListener('abort', onAbort, { once: true });
            ran.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
          })
        : await ran;
      return result === undefined ? null : (JSON.stringify(result) ?? null);
    },
  };
  const context = Object.assign(target, methods, { ontoolchange: null }) as ModelContext;
  Object.defineProperty(context, 'ontoolchange', {
    get: () => handler,
    set: (value: unknown) => {
      if (handler) target.removeEventListener('toolchange', handler);
      handler = typeof value === 'function' ? (value as (event: Event) => unknown) : null;
      if (handler) target.addEventListener('toolchange', handler);
    },
  });
  TOOLS.set(context, own);
  WINDOWS.set(context, win);
  return context;
}

const WINDOWS = new WeakMap<object, Window>();
const contextWindow = (context: ModelContext): Window => WINDOWS.get(context) as Window;

/** What `installModelContext` found or did. */
export interface InstalledModelContext {
  /** `document.modelContext`, the browser's own or the polyfill's. */
  readonly modelContext: ModelContext;
  /** True when the browser has its own (the polyfill then installs nothing). */
  readonly native: boolean;
}

/**
 * Gives a window `document.modelContext` (and `navigator.modelContext`, the name of earlier
 * drafts) when the browser has none, never over a native one. Each same-origin frame that
 * registers or lists tools installs it in its own window (or its parent passes the frame's).
 * Returns undefined outside a secure context, where the draft exposes nothing.
 */
export function installModelContext(win: Window = window): InstalledModelContext | undefined {
  const existing = (win.document as { modelContext?: ModelContext }).modelContext;
  if (existing) return { modelContext: existing, native: !TOOLS.has(existing) };
  if (!win.isSecureContext) return undefined;
  const modelContext = createModelContext(win);
  for (const holder of [win.document, win.navigator]) {
    if (!('modelContext' in holder)) {
      Object.defineProperty(holder, 'modelContext', { value: modelContext, configurable: true });
    }
  }
  return { modelContext, native: false };
}

/** The `document.modelContext` a call works with: the one passed, else the page's; `invalid-options` when neither is there. */
export function requireModelContext(passed: ModelContext | undefined): ModelContext {
  const context = passed ?? (document as { modelContext?: ModelContext }).modelContext;
  if (!context) {
    throw new AirlockError(
      'invalid-options',
      'This page has no document.modelContext: call installModelContext() first, or pass modelContext.',
    );
  }
  return context;
}
