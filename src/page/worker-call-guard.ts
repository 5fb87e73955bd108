import { AirlockError } from '../errors/airlock-error';
import { waitFor } from '../timing/wait';

/**
 * Makes a call to the agent worker once it has started, and never leaves it hanging: it
 * rejects with the start's failure (e.g. `worker-load-failed`), or `agent-disposed` when
 * the agent is disposed before or while the call is answered. A worker that never came up,
 * or was terminated, would otherwise never answer.
 */
export type WorkerCallGuard = <T>(call: () => Promise<T>) => Promise<T>;

/** The guard of an agent whose start is `started` and whose life ends with `lifetime`. */
export function workerCallGuard(started: Promise<unknown>, lifetime: AbortSignal): WorkerCallGuard {
  const disposed = () => new AirlockError('agent-disposed', 'This agent was disposed.');
  return async (call) => {
    if (lifetime.aborted) throw disposed();
    await started;
    const answered = await waitFor(call(), { signal: lifetime });
    if (answered.outcome !== 'settled') throw disposed();
    return answered.value;
  };
}
