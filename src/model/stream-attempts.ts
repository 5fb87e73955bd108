import type { AirlockError } from '../errors/airlock-error';
import type { Timers } from '../timing/timers';
import type { ModelCallOptions, ModelStreamPart } from './chat-model';
import { IdleWatchdog } from './idle-watchdog';
import { streamIdleError } from './model-errors';

/** Requests one streamed call may make when the stream goes silent before any content. */
const MAX_STALL_ATTEMPTS = 2;

/** One request and its stream, under `signal`; sets `progress.content` once it yields content. */
export type StreamAttempt = (
  signal: AbortSignal,
  watchdog: IdleWatchdog,
  progress: { content: boolean },
) => AsyncIterable<ModelStreamPart>;

/**
 * Runs a streamed call, guarded by a fresh idle watchdog per request. A stream that goes
 * silent is retried once, and only while nothing of it (no text, reasoning or tool call)
 * was yielded: a retry then cannot repeat or contradict what the page was shown. A stall
 * after content fails `model-stream-idle` at once. Shared by both APIs' models.
 */
export async function* streamWithStallRetry(
  attempt: StreamAttempt,
  options: ModelCallOptions,
  timers: Timers,
  fail: (error: unknown) => AirlockError,
): AsyncIterable<ModelStreamPart> {
  for (let attempts = 1; ; attempts++) {
    const watchdog = new IdleWatchdog(options.idleTimeoutMs, timers);
    const progress = { content: false };
    try {
      yield* attempt(AbortSignal.any([options.signal, watchdog.signal]), watchdog, progress);
      // The SDK ends iteration quietly when its request is aborted, so say why it ended.
      if (!watchdog.fired) return;
    } catch (error) {
      if (!watchdog.fired) {
        if (options.signal.aborted) return;
        throw fail(error);
      }
    } finally {
      watchdog.stop();
    }
    if (options.signal.aborted) return;
    if (progress.content || attempts >= MAX_STALL_ATTEMPTS)
      throw streamIdleError(options.idleTimeoutMs, attempts);
  }
}

/** Whether a part shows the page something, after which a stalled stream is not retried. */
export function isContent(part: ModelStreamPart): boolean {
  return (
    part.type === 'text-delta' || part.type === 'tool-call-delta' || part.type === 'reasoning-delta'
  );
}
