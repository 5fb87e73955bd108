import type { ToolReuse } from '../protocol/sandbox-wire';

// How the page describes its sandboxed toolsets and what it reports of them: types only,
// read by the agent's options, the sandbox host and its checks.

/** Options every toolset takes, whatever its isolation. */
export interface ToolsetCommonOptions {
  /** Names the toolset in errors and stats. */
  readonly name: string;
  /**
   * How long one tool worker keeps serving: one `call`, the calls of one `run` (the
   * default), or of one `conversation`. A worker never serves two conversations, so what
   * a tool leaves in its worker reaches no other conversation; `call` also keeps runs of
   * one conversation apart, at the price of a fresh worker per call.
   */
  readonly reuse?: ToolReuse;
  /** Fresh workers kept started and idle, so a call does not wait for one to start (default 1). */
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

/**
 * A toolset in plain Web Workers of the app's origin: its own thread and a hard kill.
 * `serveTools` takes IndexedDB, Cache Storage, Web Locks, BroadcastChannel and nested
 * workers from it before its tools load; the app's cookies and network stay within reach.
 */
export interface WorkerToolsetOptions extends ToolsetCommonOptions {
  /** `worker` (the default). */
  readonly isolation?: 'worker';
  /**
   * Starts a tool worker, in the form bundlers understand:
   * `() => new Worker(new URL('./tools.worker.ts', import.meta.url), { type: 'module' })`.
   * The entry calls `serveTools(() => import('./my-tools').then((module) => module.tools))`
   * from `airlock-agents/sandbox`. Called again for every replacement of a killed worker.
   */
  readonly worker: () => Worker;
  readonly workerUrl?: never;
  readonly allowedOrigins?: never;
}

/**
 * A toolset whose workers run inside sandboxed iframes with an opaque origin: no access to
 * the app's storage or cookies, and network only to `allowedOrigins`. Killing a worker
 * removes its iframe. The host must serve the worker's modules with CORS that admits the
 * origin `null` (e.g. `Access-Control-Allow-Origin: *`); a host page with a CSP must allow
 * the sandbox (see `IFRAME_BOOTSTRAP_HASH`).
 */
export interface IframeToolsetOptions extends ToolsetCommonOptions {
  readonly isolation: 'iframe';
  /**
   * URL of the tool worker module (the entry that calls `serveTools`). The worker is
   * created inside the iframe, so a page-side factory cannot be used. With Vite:
   * `import toolsUrl from './tools.worker.ts?worker&url'`; unbundled, or in Vite's dev
   * server: `new URL('./tools.worker.ts', import.meta.url).href`. The worker's modules
   * must all come from this URL's origin.
   */
  readonly workerUrl: string | URL;
  /** Origins the tools may connect to (CSP `connect-src`), e.g. `https://api.example.com`. Default none. */
  readonly allowedOrigins?: readonly string[];
  readonly worker?: never;
}

/** How the page describes a set of sandboxed tools; `isolation` picks the variant. */
export type ToolsetOptions = WorkerToolsetOptions | IframeToolsetOptions;

/** Live and lifetime worker counts of one toolset, as the page sees them. */
export interface SandboxStats {
  /** Workers started and not terminated. */
  readonly live: number;
  readonly started: number;
  readonly killed: number;
}
