/** Median, 95th percentile and spread of a sample, in the sample's unit. */
export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly min: number;
  readonly max: number;
}

/** Summarises samples (nearest-rank percentiles), rounded to 0.01. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (quantile: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(quantile * sorted.length) - 1)] ?? Number.NaN;
  const round = (value: number) => Math.round(value * 100) / 100;
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    min: round(sorted[0] ?? Number.NaN),
    max: round(sorted.at(-1) ?? Number.NaN),
  };
}

/**
 * A distribution-free interval for the median of the population `samples` come from: the
 * order statistics `[x(k), x(n−k+1)]` with the largest `k` for which a binomial(n, ½) count
 * falls below `k` with chance at most `(1 − confidence) / 2`. Undefined for fewer than 6
 * samples, too few for a 95 % interval.
 */
export function medianInterval(
  samples: readonly number[],
  confidence = 0.95,
): { low: number; high: number } | undefined {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const tail = (1 - confidence) / 2;
  // P(B ≤ j) for B ~ binomial(n, ½), summed term by term.
  let term = 0.5 ** n;
  let below = term;
  let k = 0;
  for (let j = 0; below <= tail && j < n; j++) {
    k = j + 1;
    term = (term * (n - j)) / (j + 1);
    below += term;
  }
  const low = sorted[k - 1];
  const high = sorted[n - k];
  return k === 0 || low === undefined || high === undefined ? undefined : { low, high };
}
