import { AirlockError, isAirlockError } from '../errors/airlock-error';
import { checkField, idCheck } from '../errors/field-checks';
import { DEFAULT_DATABASE } from '../protocol/memory';
import { loadChunk } from '../runtime/load-chunk';
import { randomId } from '../runtime/random-id';
import type { Agent } from './agent';
import type { AgentOptions, RetryOptions, RunOptions } from './agent-options';
import { AgentRun, loadRunStream } from './agent-run';
import type { RunStart } from './agent-setup';
import type { AgentStart } from './agent-start';
import { AgentWatch } from './agent-watch';
import { lazyKnowledge, lazyMemory } from './lazy-clients';
import type { RunInput } from './run-input';
import type { SandboxStats } from './toolset-options';

/** What `sandboxStats` reports for a toolset before the agent's start has loaded. */
const NO_WORKERS: SandboxStats = { live: 0, started: 0, killed: 0 };

/**
 * Creates an agent whose loop runs in a Web Worker. The page keeps only this thin client:
 * the model SDK and the loop live in the worker, sandboxed tools in workers of their own.
 * The options are checked as the agent starts, before its worker does: one that is missing
 * or wrong fails `ready`, and every run, with an `invalid-options` `AirlockError` whose
 * message and `details.field` name it, and no worker is started.
 */
export function createAgent(options: AgentOptions): Agent {
  // Taken now, as the app gave them (they are checked once the start has loaded): a later
  // change to the options object, at any depth, changes nothing.
  const given = copied(options);
  const runs = new Set<AgentRun>();
  const watches = new Set<AgentWatch>();
  let disposed = false;
  const lifetime = new AbortController();
  const endAll = (error: AirlockError) => {
    for (const run of [...runs]) run.fail(error);
    for (const watch of [...watches]) watch.end();
  };
  // The start (with the option checks) and the runs' code load at once; the start creates
  // the worker. A run whose code fails to load reports it itself.
  loadRunStream().catch(() => {});
  let started: AgentStart | undefined;
  const starting = loadChunk('agent-start', () => import('./agent-start'))
    .then(({ startAgent }) => {
      if (disposed) throw new AirlockError('agent-disposed', 'This agent was disposed.');
      started = startAgent(given, lifetime.signal, endAll);
      return started;
    })
    .catch((error: unknown) => {
      throw isAirlockError(error)
        ? error
        : new AirlockError(
            'worker-load-failed',
            `Airlock's page code could not load: ${error instanceof Error ? error.message : String(error)}.`,
            { cause: error },
          );
    });
  // Wrong options and a page that could not load its code end what already waits on the agent.
  starting.catch(endAll);
  const ready = starting.then((start) => start.ready);
  // Runs report a failed start themselves; an app that never reads `ready` must not see it unhandled.
  ready.catch(() => {});
  const storage = starting.then((start) => start.storage);
  storage.catch(() => {});
  const defaultConversation =
    typeof given?.conversationId === 'string' ? given.conversationId : randomId('conversation');
  const database = given?.memory?.database;

  /**
   * Creates the page side of a run. Once the start has loaded, `prepare` checks the run's
   * arguments and makes its request; once the agent is ready, the worker is asked to start
   * it on a port of its own.
   */
  const startRun = (
    runId: string,
    conversationId: string,
    runOptions: RunOptions,
    prepare: (start: AgentStart) => RunStart,
  ): AgentRun => {
    const channel = new MessageChannel();
    let signal: AbortSignal | undefined;
    const onAbort = () => run.abort();
    let markEnded: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const run = new AgentRun(
      runId,
      channel.port1,
      () => {
        runs.delete(run);
        signal?.removeEventListener('abort', onAbort);
        markEnded();
      },
      runOptions?.output,
    );
    if (disposed) {
      run.fail(new AirlockError('agent-disposed', 'This agent was disposed; create a new one.'));
      return run;
    }
    runs.add(run);
    starting
      .then(async (start) => {
        const prepared = prepare(start);
        signal = runOptions.signal;
        if (signal?.aborted) {
          run.abortBeforeStart(start.model, conversationId);
          return;
        }
        signal?.addEventListener('abort', onAbort, { once: true });
        await start.ready;
        await start.run(prepared, channel.port2, ended);
      })
      .catch((error: unknown) => {
        run.fail(
          isAirlockError(error)
            ? error
            : new AirlockError('worker-crashed', 'The agent worker did not accept the run.', {
                cause: error,
              }),
        );
      });
    return run;
  };

  return {
    ready,
    storage,
    get disposed() {
      return disposed;
    },
    // One implementation for both overloads: the schema types only what `result` resolves with.
    run: ((input: RunInput, runOptions: RunOptions = {}) => {
      // A list of parts is copied too: an app may empty its list of attachments once sent.
      const parts = copied(input);
      const taken = copied(runOptions);
      const runId = randomId('run');
      const conversationId =
        typeof taken?.conversationId === 'string' ? taken.conversationId : defaultConversation;
      return startRun(runId, conversationId, taken, (start) =>
        start.prepareRun(runId, parts, taken, conversationId),
      );
    }) as Agent['run'],
    resume: ((runId: string, runOptions: Omit<RunOptions, 'conversationId'> = {}) => {
      const taken = copied(runOptions);
      // A run id that is no string is refused once the start has loaded; until then, and in
      // the refusal's event, the run is known by an empty id rather than a value of another type.
      const known = typeof runId === 'string' ? runId : '';
      return startRun(known, '', taken, (start) => start.prepareResume(runId, taken));
    }) as Agent['resume'],
    retryRefused: ((conversationId: string, retryOf: string, retryOptions: RetryOptions = {}) => {
      const taken = copied(retryOptions);
      const runId = randomId('run');
      const known = typeof conversationId === 'string' ? conversationId : '';
      return startRun(runId, known, taken, (start) =>
        start.prepareRetry(runId, conversationId, retryOf, taken),
      );
    }) as Agent['retryRefused'],
    watch(conversationId = defaultConversation) {
      checkField(conversationId, 'conversationId', idCheck, 'invalid-input');
      const channel = new MessageChannel();
      const watch = new AgentWatch(conversationId, channel.port1, () => watches.delete(watch));
      if (disposed) {
        watch.end();
        return watch;
      }
      watches.add(watch);
      ready
        .then(() => (started as AgentStart).watch(conversationId, channel.port2))
        // A failed start or a crash ends the watch; `ready` says why.
        .catch(() => watch.end());
      return watch;
    },
    conversationId: defaultConversation,
    memory: lazyMemory(
      () => starting.then((start) => start.memory()),
      typeof database === 'string' ? database : DEFAULT_DATABASE,
    ),
    knowledge: lazyKnowledge(() => starting.then((start) => start.knowledge())),
    sandboxStats: () =>
      started?.sandboxStats() ??
      Object.fromEntries(
        (Array.isArray(given?.toolsets) ? given.toolsets : []).map((toolset) => [
          toolset?.name,
          NO_WORKERS,
        ]),
      ),
    dispose() {
      if (disposed) return;
      disposed = true;
      const error = new AirlockError(
        'agent-disposed',
        'The agent was disposed while the run was going on.',
      );
      endAll(error);
      lifetime.abort();
      // At once when the start has loaded (tool workers and iframes end now), else once it has.
      if (started) started.dispose(error);
      else
        void starting.then(
          (start) => start.dispose(error),
          () => {},
        );
    },
  };
}

/** How deep `copied` goes; options nested deeper than this are no options Airlock reads. */
const COPY_DEPTH = 32;

/**
 * `value` as it is now: arrays and plain objects are copied (a cycle stays a cycle), so that
 * a later change to the app's options or parts changes nothing; anything else (functions,
 * schemas, signals, bytes), and whatever lies deeper than `COPY_DEPTH`, is kept as it is, so
 * a hostile nesting cannot overflow the stack.
 */
function copied<T>(value: T, seen = new Map<object, unknown>(), depth = 0): T {
  if (typeof value !== 'object' || value === null || depth > COPY_DEPTH) return value;
  const prototype: unknown = Object.getPrototypeOf(value);
  const isArray = Array.isArray(value);
  if (!isArray && prototype !== Object.prototype && prototype !== null) return value;
  if (seen.has(value)) return seen.get(value) as T;
  const copy: Record<string, unknown> = isArray
    ? []
    : prototype === null
      ? Object.create(null)
      : {};
  seen.set(value, copy);
  for (const key of Object.keys(value))
    copy[key] = copied((value as Record<string, unknown>)[key], seen, depth + 1);
  return copy as T;
}
