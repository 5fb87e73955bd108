import { AirlockError, isAirlockError } from '../errors/airlock-error';
import { realTimers, type Timers } from '../timing/timers';
import { waitFor } from '../timing/wait';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';

/** Default of `limits.networkWaitMs`: how long a model call waits for the network to come back. */
export const DEFAULT_NETWORK_WAIT_MS = 60_000;

/**
 * How often a waiting call looks again, doubling up to the last: `online` events are not
 * always sent (a captive portal, a VPN, some engines' workers), and a refused connection
 * has no event at all, so the wait does not rely on them alone.
 */
const RECHECK_MS = [1_000, 2_000, 4_000, 8_000, 10_000] as const;

/** What the browser says of the network; tests pass their own. */
export interface NetworkStatus {
  /** False when the browser knows it is offline (`navigator.onLine`); true may still be wrong. */
  online(): boolean;
  /** Calls `listener` on each `online` event; returns how to stop. */
  onOnline(listener: () => void): () => void;
}

/** The network as this thread's `navigator` and `online` events tell it (workers have both). */
export const browserNetwork: NetworkStatus = {
  online: () => globalThis.navigator?.onLine !== false,
  onOnline(listener) {
    if (typeof globalThis.addEventListener !== 'function') return () => {};
    globalThis.addEventListener('online', listener);
    return () => globalThis.removeEventListener('online', listener);
  },
};

/** A `NetworkStatus` that also hears what the page tells it (`tellOnline`). */
export interface ForwardedNetwork extends NetworkStatus {
  /** The page saw `online`: every waiting call looks again now. */
  tellOnline(): void;
}

/**
 * The network as this thread tells it, plus the `online` events the page forwards: in
 * Chromium a worker gets none of its own, so without them a waiting call would only notice
 * the network back at its next look (up to 10 s later), and each engine would differ.
 */
export function forwardedNetwork(base: NetworkStatus = browserNetwork): ForwardedNetwork {
  const listeners = new Set<() => void>();
  return {
    online: () => base.online(),
    onOnline(listener) {
      listeners.add(listener);
      const stopBase = base.onOnline(listener);
      return () => {
        listeners.delete(listener);
        stopBase();
      };
    },
    tellOnline() {
      for (const listener of [...listeners]) listener();
    },
  };
}

/** How a model waits for the network. */
export interface NetworkWaitOptions {
  /** Longest wait of one call, in all (0: never wait). */
  readonly maxWaitMs: number;
  readonly network?: NetworkStatus;
  readonly timers?: Timers;
}

/**
 * A `ChatModel` whose calls wait for the network instead of failing: a call made while the
 * browser is offline waits for it to come back before any request is sent, and one that
 * fails to connect before anything streamed waits and is made again. The wait is told once
 * (`onNetworkWait`), ends at once on abort (the stream then ends quietly), and past
 * `maxWaitMs` the call fails `model-unreachable`. A connection error while the browser says
 * it is online waits only once the endpoint has answered this model: a CORS refusal looks
 * the same to a page, and it never heals. Wraps the endpoint's model directly, so the idle
 * watchdog and the rate limit's accounting never see the wait.
 */
export function withNetworkWait(model: ChatModel, options: NetworkWaitOptions): ChatModel {
  const { maxWaitMs, network = browserNetwork, timers = realTimers } = options;
  if (maxWaitMs <= 0) return model;
  /** The endpoint has answered a call of this model (so it is no CORS or address mistake). */
  let reached = false;

  return {
    name: model.name,
    async *stream(
      request: ModelRequest,
      callOptions: ModelCallOptions,
    ): AsyncIterable<ModelStreamPart> {
      const { signal } = callOptions;
      let waitStartedAt: number | undefined;
      let lastError: unknown;
      for (let recheck = 0; ; recheck++) {
        let reason: 'offline' | 'unreachable' = 'offline';
        if (network.online()) {
          let yielded = false;
          try {
            for await (const part of model.stream(request, callOptions)) {
              yielded = true;
              reached = true;
              yield part;
            }
            return;
          } catch (error) {
            if (answered(error)) reached = true;
            if (yielded || signal.aborted || !isConnectionError(error)) throw error;
            // Online, and never answered: most likely CORS or a wrong address, not the network.
            if (network.online() && !reached) throw error;
            lastError = error;
            reason = network.online() ? 'unreachable' : 'offline';
          }
        }
        if (waitStartedAt === undefined) {
          waitStartedAt = timers.now();
          await callOptions.onNetworkWait?.({ reason, maxWaitMs });
        }
        const left = waitStartedAt + maxWaitMs - timers.now();
        if (left <= 0) throw lastError ?? offlineError(maxWaitMs);
        const interval = RECHECK_MS[Math.min(recheck, RECHECK_MS.length - 1)] ?? 10_000;
        const waited = await untilOnline(network, {
          signal,
          timers,
          timeoutMs: Math.min(left, interval),
        });
        // Online again, or time to look: the next turn calls (or fails past the limit).
        if (waited === 'aborted') return;
      }
    },

    complete: (request, completeOptions) => model.complete(request, completeOptions),
  };
}

/** Waits for an `online` event or the timeout, whichever first; `aborted` when the signal does. */
async function untilOnline(
  network: NetworkStatus,
  options: { readonly signal: AbortSignal; readonly timers: Timers; readonly timeoutMs: number },
): Promise<'online' | 'timed-out' | 'aborted'> {
  let stop: () => void = () => {};
  try {
    const online = new Promise<void>((resolve) => {
      stop = network.onOnline(resolve);
    });
    const waited = await waitFor(online, options);
    return waited.outcome === 'settled' ? 'online' : waited.outcome;
  } finally {
    stop();
  }
}

/** A failure to connect (refused, reset, DNS, offline): no HTTP answer, and no timeout either. */
function isConnectionError(error: unknown): boolean {
  return (
    isAirlockError(error) && error.code === 'model-unreachable' && error.details.timedOut !== true
  );
}

/** Whether the endpoint answered the call that failed (an HTTP status, a stream that began). */
function answered(error: unknown): boolean {
  return isAirlockError(error) && error.code !== 'model-unreachable';
}

function offlineError(maxWaitMs: number): AirlockError {
  return new AirlockError(
    'model-unreachable',
    `The browser stayed offline for ${maxWaitMs} ms (limits.networkWaitMs); the model call was not made.`,
    { details: { timedOut: false, offline: true, waitedMs: maxWaitMs } },
  );
}
