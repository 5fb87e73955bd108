import { realTimers, type Timers } from '../timing/timers';
import { sleep } from '../timing/wait';
import type { ChatModel, ModelCallOptions, ModelRequest, ModelStreamPart } from './chat-model';
import { estimateRequestTokens, estimateTextTokens, TokenCalibration } from './estimate-tokens';
import type { RateLimiter } from './rate-limiter';

/**
 * A `ChatModel` whose calls first wait for `limiter`. The wait is reported through
 * `onRateLimitWait` and ends at once when the call's signal aborts: the stream then ends
 * without a request having been sent, and what the call had reserved is given back.
 */
export function withRateLimit(
  model: ChatModel,
  limiter: RateLimiter,
  {
    tokens = new TokenCalibration(),
    timers = realTimers,
  }: { readonly tokens?: TokenCalibration; readonly timers?: Timers } = {},
): ChatModel {
  const estimate = (request: ModelRequest) => tokens.scale(estimateRequestTokens(request));
  return {
    name: model.name,
    async *stream(
      request: ModelRequest,
      options: ModelCallOptions,
    ): AsyncIterable<ModelStreamPart> {
      const prompt = estimate(request);
      const reservation = limiter.reserve(prompt);
      if (!(await waitForTurn(reservation, options, timers))) return;
      let completion = '';
      let reported = false;
      try {
        for await (const part of model.stream(request, options)) {
          if (part.type === 'text-delta') completion += part.delta;
          if (part.type === 'tool-call-delta') completion += part.argumentsDelta;
          if (part.type === 'usage') {
            reported = true;
            reservation.settle(part.usage.totalTokens);
          }
          yield part;
        }
      } finally {
        // No usage from the server: settle with an estimate, so the bucket still sees the answer.
        if (!reported) reservation.settle(prompt + tokens.scale(estimateTextTokens(completion)));
      }
    },

    async complete(request, options) {
      const prompt = estimate(request);
      const reservation = limiter.reserve(prompt);
      if (!(await waitForTurn(reservation, { signal: options.signal }, timers))) {
        // The model fails the same way for an aborted signal; let it say so.
        return model.complete(request, options);
      }
      const answer = await model.complete(request, options);
      // A server that reports no usage answers 0: the estimate stands in.
      reservation.settle(
        answer.usage.totalTokens || prompt + tokens.scale(estimateTextTokens(answer.text)),
      );
      return answer;
    },
  };
}

/** Waits out a reservation; false (and the reservation given back) when the signal aborts first. */
async function waitForTurn(
  reservation: ReturnType<RateLimiter['reserve']>,
  options: Pick<ModelCallOptions, 'signal' | 'onRateLimitWait'>,
  timers: Timers,
): Promise<boolean> {
  if (reservation.waitMs <= 0) return true;
  const readyAt = timers.now() + reservation.waitMs;
  await options.onRateLimitWait?.({ waitMs: reservation.waitMs, limit: reservation.limit });
  // Reporting the wait may itself have waited (backpressure); that time counts.
  const ready = await sleep(readyAt - timers.now(), { signal: options.signal, timers });
  if (!ready) reservation.cancel();
  return ready;
}
