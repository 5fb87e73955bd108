/**
 * Admission against the spend limits, as plain data: the caller's limits, the reservation
 * of a request's worst case (or the 429 / 503 refusing it) and the settling of a ticket.
 */
import type { ProxyCaller } from './authorize.js';
import { errorAnswer, type ProxyAnswer } from './error-response.js';
import type { ResolvedProxyOptions } from './proxy-options.js';
import {
  mergeLimits,
  type SpendLimits,
  type SpendMeter,
  type SpendRefusal,
  type SpendTicket,
  type TokenUsage,
} from './spend-limits.js';

/** What admission needs of the gateway. */
export interface SpendContext {
  readonly config: ResolvedProxyOptions;
  readonly meter: SpendMeter;
}

/** The proxy's limits with the caller's own on top, or the 500 when they need prices it lacks. */
export function limitsOf(
  caller: ProxyCaller,
  config: ResolvedProxyOptions,
): SpendLimits | ProxyAnswer {
  const limits = mergeLimits(config.limits, caller.limits);
  if (limits.costPerDay !== undefined && config.prices === undefined) {
    config.logger(
      'Airlock proxy: authorize gave a `costPerDay` limit but the proxy has no `prices`.',
    );
    return errorAnswer(500, 'authorize_failed', 'The proxy could not check who is calling.');
  }
  return limits;
}

/**
 * Reserves a request and its worst case against the user's limits: the ticket its answer
 * settles, else the 429, or the 503 when the counter store fails.
 */
export async function reserve(
  userId: string,
  limits: SpendLimits,
  gateway: SpendContext,
  worstCase: TokenUsage,
  price: Parameters<SpendMeter['reserve']>[3],
): Promise<SpendTicket | ProxyAnswer> {
  let admission: Awaited<ReturnType<SpendMeter['reserve']>>;
  try {
    admission = await gateway.meter.reserve(userId, limits, worstCase, price);
  } catch (error) {
    // Fail closed: with the counts unknown, letting the request through would lift every limit.
    gateway.config.logger(
      `Airlock proxy: the counter store failed (${error instanceof Error ? error.name : typeof error}); the request was refused.`,
    );
    return errorAnswer(
      503,
      'limits_unavailable',
      'The proxy could not check its limits; try again.',
      {
        retryable: true,
      },
    );
  }
  if (admission.kind === 'refused') return spendRefusal(admission.refusal);
  return admission.ticket;
}

/** A 429 the page's `openai` client understands: `retry-after` (seconds) and `retry-after-ms`. */
function spendRefusal(refusal: SpendRefusal): ProxyAnswer {
  const waitMs = Math.max(0, Math.ceil(refusal.retryAfterMs));
  const headers = {
    'retry-after': String(Math.ceil(waitMs / 1000)),
    'retry-after-ms': String(waitMs),
  };
  if (refusal.limit === 'concurrentRequests') {
    return errorAnswer(
      429,
      'rate_limited',
      `This user already has ${refusal.value} requests in flight; retry when one has finished.`,
      { headers, param: refusal.limit, retryable: true },
    );
  }
  if (refusal.limit === 'costPerDay') {
    return errorAnswer(
      429,
      'budget_exceeded',
      `This user's budget for the day (${refusal.value}) is spent; it renews in ${Math.ceil(waitMs / 60_000)} min.`,
      // Waiting out a day inside one request helps nobody; the page's client fails at once.
      { headers, param: 'costPerDay' },
    );
  }
  const unit = refusal.limit === 'requestsPerMinute' ? 'requests' : 'tokens';
  return errorAnswer(
    429,
    'rate_limited',
    `This user's limit of ${refusal.value} ${unit} per minute is reached; retry in ${Math.ceil(waitMs / 1000)} s.`,
    { headers, param: refusal.limit, retryable: true },
  );
}

/** Settles `ticket`, logging (never throwing) a store failure. */
export function settleTicket(
  ticket: SpendTicket,
  used: TokenUsage,
  gateway: SpendContext,
  what: string,
): void {
  gateway.meter.settle(ticket, used).catch((error: unknown) => {
    gateway.config.logger(
      `Airlock proxy: settling ${what} in the counter store failed (${error instanceof Error ? error.name : typeof error}).`,
    );
  });
}
