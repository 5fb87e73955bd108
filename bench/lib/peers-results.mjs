// Turns the peers bench's samples into bench/results/peers.json: summaries per metric and
// the figures derived from pairs of runs made in the same round.

/** @typedef {import('../stats').Summary} Summary */
/** @typedef {(samples: readonly number[]) => Summary} Summarize */

/**
 * Each field of the samples (but `round`), summarised: a number over the samples, a list
 * of numbers over all the samples' lists together.
 * @param {readonly object[]} samples
 * @param {Summarize} summarize
 * @returns {Record<string, Summary>}
 */
export function summarizeFields(samples, summarize) {
  const rows = /** @type {readonly Record<string, unknown>[]} */ (samples);
  const keys = Object.keys(rows[0] ?? {}).filter((key) => key !== 'round');
  return Object.fromEntries(
    keys.map((key) => [
      key,
      summarize(
        rows.flatMap((row) => {
          const value = row[key];
          return Array.isArray(value) ? value.map(Number) : [Number(value)];
        }),
      ),
    ]),
  );
}

/**
 * Values of `measure` for the rounds where both `a` and `b` have a sample.
 * @param {readonly { round: number; wallMs: number }[]} a
 * @param {readonly { round: number; wallMs: number }[]} b
 * @param {(a: { wallMs: number }, b: { wallMs: number }) => number} measure
 */
function paired(a, b, measure) {
  return a.flatMap((left) => {
    const right = b.find((sample) => sample.round === left.round);
    return right ? [measure(left, right)] : [];
  });
}

/**
 * Airlock against the raw loop in a worker, per step: wall time over the steps, the
 * overhead as the ratio of the medians, and the same ratio within each round (the two
 * runs of a round are minutes closer together than runs of different rounds).
 * @param {readonly { round: number; wallMs: number }[]} airlock
 * @param {readonly { round: number; wallMs: number }[]} rawWorker
 * @param {number} steps
 * @param {Summarize} summarize
 */
export function perStepOverhead(airlock, rawWorker, steps, summarize) {
  const airlockMsPerStep = summarize(airlock.map((sample) => sample.wallMs / steps));
  const rawWorkerMsPerStep = summarize(rawWorker.map((sample) => sample.wallMs / steps));
  return {
    airlockMsPerStep,
    rawWorkerMsPerStep,
    extraMsPerStep: airlockMsPerStep.p50 - rawWorkerMsPerStep.p50,
    overheadPercent: (airlockMsPerStep.p50 / rawWorkerMsPerStep.p50 - 1) * 100,
    overheadPercentPerRound: summarize(
      paired(airlock, rawWorker, (a, b) => (a.wallMs / b.wallMs - 1) * 100),
    ),
  };
}

/**
 * Delivery rates and, per round, Airlock's as a share of the raw MessagePort's and of the
 * raw worker loop's (both measured in the same page).
 * @param {readonly { portEventsPerSecond: number; airlockEventsPerSecond: number; rawWorkerEventsPerSecond: number }[]} samples
 * @param {Summarize} summarize
 */
export function deliverySummary(samples, summarize) {
  return {
    ...summarizeFields(samples, summarize),
    airlockPercentOfPort: summarize(
      samples.map((sample) => (sample.airlockEventsPerSecond / sample.portEventsPerSecond) * 100),
    ),
    rawWorkerPercentOfPort: summarize(
      samples.map((sample) => (sample.rawWorkerEventsPerSecond / sample.portEventsPerSecond) * 100),
    ),
    airlockPercentOfRawWorker: summarize(
      samples.map(
        (sample) => (sample.airlockEventsPerSecond / sample.rawWorkerEventsPerSecond) * 100,
      ),
    ),
  };
}
