import type { ToolCallRequest, ToolCheck, ToolOutcome, ToolSpec } from './tools';

/**
 * The message the page posts to a new tool worker (or to the iframe that hosts one) to
 * hand it the port the agent worker's supervisor talks on. Calls then go straight from
 * the agent worker to the tool worker; the page only starts and kills workers.
 */
export interface SandboxConnect {
  readonly kind: 'airlock-sandbox-connect';
  readonly port: MessagePort;
}

/** Supervisor → tool worker, on the connected port. */
export type SandboxRequest =
  | { readonly kind: 'describe'; readonly id: number }
  | { readonly kind: 'check'; readonly id: number; readonly request: ToolCallRequest }
  | { readonly kind: 'execute'; readonly id: number; readonly request: ToolCallRequest }
  | { readonly kind: 'cancel'; readonly callId: string }
  /** The answer to the tool worker's `call-tool` with the same `id`. */
  | { readonly kind: 'tool-called'; readonly id: number; readonly outcome: ToolOutcome };

/**
 * Tool worker → supervisor: the answer to the request with the same `id`, naming the call
 * it answers. The agent worker parses every answer: a tool's code can rewrite anything its
 * worker posts, so an answer that does not fit is a protocol violation, not data.
 */
export type SandboxResponse =
  | {
      readonly kind: 'described';
      readonly id: number;
      readonly tools: readonly ToolSpec[];
      /**
       * What `serveTools` could not remove from the worker before its tools loaded (e.g.
       * `navigator.locks`); empty when all of it went. The worker's own word: it tells an
       * engine that keeps a capability, never that a tool that ran first took nothing.
       */
      readonly exposed: readonly string[];
    }
  | {
      readonly kind: 'checked';
      readonly id: number;
      readonly callId: string;
      readonly check: ToolCheck;
    }
  | {
      readonly kind: 'executed';
      readonly id: number;
      readonly callId: string;
      readonly outcome: ToolOutcome;
    }
  /** Answers `describe`: the worker cannot serve here (no WebAssembly under the page's CSP, say). */
  | { readonly kind: 'unavailable'; readonly id: number; readonly reason: string }
  /**
   * Not an answer but a request of the worker's own, in its own `id` sequence: while the
   * call `callId` runs, run another of the agent's tools for it. The agent worker decides
   * (the tool must be one the toolset declared callable) and answers with `tool-called`.
   */
  | {
      readonly kind: 'call-tool';
      readonly id: number;
      readonly callId: string;
      readonly toolName: string;
      readonly arguments: unknown;
    };

/** How a toolset is isolated. */
export type IsolationTier = 'worker' | 'iframe';

/**
 * How long one tool worker may keep serving: a single call, the calls of one run, or
 * the calls of one conversation. A worker never serves two conversations: state a tool
 * leaves behind (or code it plants) reaches no other conversation's calls.
 */
export type ToolReuse = 'call' | 'run' | 'conversation';

/** A toolset as the agent worker needs to know it (its worker factory stays on the page). */
export interface ToolsetConfig {
  readonly name: string;
  readonly isolation: IsolationTier;
  /** How long a worker keeps serving before it is replaced by a fresh one. */
  readonly reuse: ToolReuse;
  /** Fresh workers kept started and idle, so a call does not pay for a cold start. */
  readonly poolSize: number;
  /** Calls of this toolset running at once; more wait for a free worker. */
  readonly maxConcurrency: number;
  /** Deadline of a call whose tool sets none. */
  readonly timeoutMs: number;
  /** After the deadline, how long the tool gets to honour its AbortSignal before its worker is killed. */
  readonly graceMs: number;
  /** How long a new worker may take to load and describe its tools. */
  readonly startTimeoutMs: number;
}

/**
 * Page → supervisor, on a spawned worker's `status` port: the worker's script could not
 * load (a 404, a syntax error, a refused MIME type or CSP), as its `error` event said
 * before the worker described its tools. Lets a start fail at once rather than at
 * `startTimeoutMs`. Only the page that created the worker hears that event.
 */
export interface SandboxLoadFailed {
  readonly kind: 'load-failed';
  /** What the engine said (an `ErrorEvent`'s message), or a description of the bare event. */
  readonly reason: string;
  /** The script's URL, when the page knows it (the iframe tier's `workerUrl`, an `ErrorEvent`'s file). */
  readonly url?: string;
}

/** A tool worker the page started: its id, the port calls go over, and the page's `status` port. */
export interface SpawnedWorker {
  readonly workerId: number;
  /** Connected to the tool worker itself: calls never pass through the page. */
  readonly port: MessagePort;
  /** Carries at most one `SandboxLoadFailed` from the page. */
  readonly status: MessagePort;
}

/** The page's side of sandboxing, called by the agent worker's supervisors. */
export interface SandboxSpawner {
  /** Starts a worker for the toolset and returns the ports connected to it and to the page. */
  spawn(toolset: string): Promise<SpawnedWorker>;
  /** Terminates a worker at once, whatever it is doing. */
  kill(workerId: number): void;
}
