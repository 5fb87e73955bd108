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
