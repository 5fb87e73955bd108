import { AirlockError } from '../errors/airlock-error';
import type { StorageStatus } from '../protocol/agent-config';
import type { GuardrailHost } from '../protocol/guardrails';
import type { MemoryApi } from '../protocol/store-api';
import type { AgentWorkerApi } from '../protocol/wire';
import { lazyMethods } from '../runtime/lazy-methods';
import { loadChunk } from '../runtime/load-chunk';
import { waitFor } from '../timing/wait';
import type { AgentKnowledge } from './agent-knowledge';
import type { AgentOptions, RetryOptions, RunOptions } from './agent-options';
import { type RunStart, resumeStart, retryStart, runStart, setUpAgent } from './agent-setup';
import type { GuardrailOptions } from './guardrail-host';
import { lazySandboxHost } from './lazy-sandbox-host';
import { PageToolHost } from './page-tool-host';
import { noteToolSpecs } from './tool-listing';
import type { SandboxStats } from './toolset-options';
import { workerCallGuard } from './worker-call-guard';
import {
  isErrorData,
  malformed,
  type Remote,
  remoteOf,
  serveOnPort,
  transfer,
} from './worker-calls';

// How an agent starts and talks to its worker, loaded by `createAgent` with a dynamic
// import: the entry keeps what must answer at once (the agent, run and watch objects),
// this the rest, from the option checks on.

/**
 * A property the agent worker's Comlink endpoint does not have: reading it is answered
 * (with `undefined`) as soon as the worker has loaded and called `serveAgent`, before any
 * slow part of `configure` (toolsets, storage), so it times the worker's own start.
 */
const START_PROBE = '__airlockStartProbe';

/** A started agent, as `createAgent` uses it. */
export interface AgentStart {
  readonly ready: Promise<readonly string[]>;
  readonly storage: Promise<StorageStatus>;
  /** The agent's model name. */
  readonly model: string;
  /** Checks `run`'s arguments and makes its request; throws a typed error for a bad one. */
  prepareRun(runId: string, input: unknown, options: RunOptions, conversationId: string): RunStart;
  /** Checks `resume`'s arguments and makes its request; throws a typed error for a bad one. */
  prepareResume(runId: string, options: RunOptions): RunStart;
  /** Checks `retryRefused`'s arguments and makes its request; throws a typed error for a bad one. */
  prepareRetry(
    runId: string,
    conversationId: string,
    retryOf: string,
    options: RetryOptions,
  ): RunStart;
  /**
   * Asks the worker to start (or resume) a run whose events cross `port`; its own tools
   * run on a host of their own, cancelled when `ended` resolves.
   */
  run(start: RunStart, port: MessagePort, ended: Promise<void>): Promise<void>;
  /** Asks the worker to relay a conversation's runs on `port`. */
  watch(conversationId: string, port: MessagePort): Promise<void>;
  memory(): Promise<MemoryApi>;
  knowledge(): Promise<AgentKnowledge>;
  sandboxStats(): Record<string, SandboxStats>;
  /** Ends the start, the hosts and, once it has closed its store, the worker. */
  dispose(error: AirlockError): void;
}

/** The error of a worker that did not load or start. */
export function loadFailed(message: string, startTimeoutMs: number): AirlockError {
  return new AirlockError('worker-load-failed', message, { details: { startTimeoutMs } });
}

/**
 * Checks the agent's options (a bad one throws `invalid-options`), creates its worker and
 * starts the agent on it: configures it, watches its start and its errors. `endAll` ends
 * the agent's runs and watches when the worker fails.
 */
export function startAgent(
  options: AgentOptions,
  lifetime: AbortSignal,
  endAll: (error: AirlockError) => void,
): AgentStart {
  const setup = setUpAgent(options);
  const { worker, config, startTimeoutMs } = setup;
  const toolHost = new PageToolHost(setup.tools);
  const sandboxHost = lazySandboxHost(setup.toolsets);
  const { remote, read } = remoteOf<AgentWorkerApi>(worker);
  /** True once the worker answered: from then on an error event is a crash, not a failed load. */
  let started = false;
  let failReady: (error: AirlockError) => void = () => {};
  let backend: StorageStatus['backend'] = 'indexeddb';
  const persisted = askPersistence(setup.persist);
  const ready = new Promise<readonly string[]>((resolve, reject) => {
    failReady = reject;
    sandboxHost.spawner
      // The sandbox host's module loads first when the agent has toolsets.
      .then(
        async (spawner) =>
          await remote.configure(
            config,
            serveOnPort(toolHost),
            serveOnPort(spawner),
            serveOnPort(lazyGuardrailHost(setup.guardrails)),
            ...(setup.tabHub ? [transfer(setup.tabHub, [setup.tabHub])] : []),
          ),
      )
      .then((result) => {
        // Parsed: a worker that answers nonsense fails the start with a typed error.
        const answer = result as Partial<Record<'ok' | 'tools' | 'error', unknown>> | null;
        if (answer?.ok === true && isStringList(answer.tools)) {
          backend = result.ok && result.storage?.backend === 'memory' ? 'memory' : 'indexeddb';
          // The list `ready` resolves with is the key to the specs: see tool-listing.ts.
          if (result.ok && result.specs) noteToolSpecs(answer.tools, result.specs);
          resolve(answer.tools);
        } else if (answer?.ok === false && isErrorData(answer.error)) {
          reject(AirlockError.fromData(answer.error));
        } else reject(malformed('answer to configure'));
      }, reject);
  });
  // Runs report a failed start themselves; an app that never reads `ready` must not see it unhandled.
  ready.catch(() => {});
  // Memory and knowledge calls wait for the start and fail with it (or with dispose).
  const workerCalls = workerCallGuard(ready, lifetime);
  const storage = ready.then(async (): Promise<StorageStatus> => {
    const answer = await persisted;
    return { backend, ...(answer === undefined ? {} : { persisted: answer }) };
  });
  storage.catch(() => {});

  const failAll = (error: AirlockError) => {
    failReady(error);
    endAll(error);
    toolHost.cancelAll();
  };
  if (setup.createError) {
    const { error } = setup.createError;
    failAll(
      loadFailed(
        `The agent worker could not be created: ${error instanceof Error ? error.message : String(error)}.`,
        startTimeoutMs,
      ),
    );
  }
  // A worker blocked by CSP, or one that never serves, may fire nothing at all: a deadline ends the wait.
  void waitFor(read(START_PROBE), { signal: lifetime, timeoutMs: startTimeoutMs }).then(
    (waited) => {
      if (waited.outcome === 'settled') started = true;
      if (waited.outcome !== 'timed-out' || started) return;
      worker.terminate();
      failAll(
        loadFailed(
          `The agent worker did not start within startTimeoutMs (${startTimeoutMs} ms): check its URL, the page's CSP worker-src, and that its entry calls serveAgent().`,
          startTimeoutMs,
        ),
      );
    },
    () => {},
  );

  const onWorkerError = (event: ErrorEvent) => {
    // Handled here: the runs end with a typed error, so the browser need not report it as uncaught.
    event.preventDefault();
    // An error nobody caught leaves the worker in a state nobody knows: it is ended, which
    // also releases the conversation locks its runs held, rather than left half alive.
    worker.terminate();
    failAll(
      started
        ? new AirlockError(
            'worker-crashed',
            `The agent worker failed: ${event.message || 'an error nobody caught'}.`,
          )
        : loadFailed(
            `The agent worker could not be loaded: ${event.message || 'its script was not found, failed to load, or was blocked (e.g. by the CSP worker-src)'}.`,
            startTimeoutMs,
          ),
    );
  };
  worker.addEventListener('error', onWorkerError);

  return {
    ready,
    storage,
    model: config.model.model,
    prepareRun: (runId, input, runOptions, conversationId) =>
      runStart(runId, input, runOptions, conversationId, config.limits),
    prepareResume: resumeStart,
    prepareRetry: (runId, conversationId, retryOf, retryOptions) =>
      retryStart(runId, conversationId, retryOf, retryOptions, config.limits),
    run({ request, tools }, port, ended) {
      const host = tools?.length ? new PageToolHost(tools) : undefined;
      if (host) void ended.then(() => host.cancelAll());
      const sent = transfer(port, [port]);
      const served = host && serveOnPort(host);
      return 'run' in request
        ? remote.run(request.run, sent, served)
        : remote.resume(request.resume, sent, served);
    },
    watch: (conversationId, port) => remote.watch(conversationId, transfer(port, [port])),
    memory: () =>
      loadChunk('agent-memory', () => import('./agent-memory')).then((module) =>
        module.createAgentMemory(remote.memory, workerCalls, setup.onStorageError),
      ),
    knowledge: () =>
      loadChunk('agent-knowledge', () => import('./agent-knowledge')).then((module) =>
        module.createAgentKnowledge(remote.knowledge, workerCalls),
      ),
    sandboxStats: () => sandboxHost.stats(),
    dispose(error) {
      worker.removeEventListener('error', onWorkerError);
      failAll(error);
      sandboxHost.dispose();
      void closeThenTerminate(remote, worker);
    },
  };
}

/**
 * The app's guardrails as the agent worker reaches them: a host whose code loads when the
 * worker first asks (it asks only for stages that have guardrails). Most agents have none.
 */
function lazyGuardrailHost(options: GuardrailOptions): GuardrailHost {
  return lazyMethods(
    ['checkInput', 'checkOutput', 'checkToolArguments'],
    (): Promise<GuardrailHost> =>
      loadChunk('guardrail-host', () => import('./guardrail-host')).then(
        ({ PageGuardrailHost }) => new PageGuardrailHost(options),
      ),
  );
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/**
 * How long a disposed agent's worker may take to close its store before it is terminated
 * anyway. Closing takes a few milliseconds: the transactions in flight finish.
 */
const CLOSE_GRACE_MS = 1_000;

/**
 * Terminates a disposed agent's worker once it has closed its store (or after
 * `CLOSE_GRACE_MS`). WebKit can leave a database unusable for every later connection when
 * a worker is terminated while one of its transactions commits; a worker whose store is
 * closed has none.
 */
async function closeThenTerminate(remote: Remote<AgentWorkerApi>, worker: Worker): Promise<void> {
  // The agent is already disposed: what the worker still does must not reach the page.
  const silence = (event: Event) => event.preventDefault();
  worker.addEventListener('error', silence);
  try {
    await waitFor(remote.close(), { timeoutMs: CLOSE_GRACE_MS });
  } catch {
    // A worker that fails to close is terminated all the same.
  } finally {
    worker.terminate();
    worker.removeEventListener('error', silence);
  }
}

/**
 * How long `agent.storage` waits for the browser's answer on persistence. Firefox asks the
 * user first, and a prompt may never be answered (or not in a headless browser at all).
 */
const PERSIST_ANSWER_MS = 3_000;

/**
 * Asks for persistent storage when the app wants it. A page-only API (`persist` is not
 * exposed in workers), so it is asked here; a refusal, a missing API or no answer within
 * `PERSIST_ANSWER_MS` is an answer (`undefined`: none), not an error.
 */
async function askPersistence(wanted: boolean | undefined): Promise<boolean | undefined> {
  if (!wanted) return undefined;
  const manager = globalThis.navigator?.storage;
  if (typeof manager?.persist !== 'function') return undefined;
  try {
    const answered = await waitFor(manager.persist(), { timeoutMs: PERSIST_ANSWER_MS });
    return answered.outcome === 'settled' ? answered.value : undefined;
  } catch {
    // The browser refused to ask (e.g. in an insecure context): no answer.
    return undefined;
  }
}
