// The scale page's CPU ratio: its bound and how its pairs are formed, shared by the page
// (which adds bursts while its verdict is undecided) and the report (which judges it).

/** The agent worker's CPU time per run, at most this many times the raw worker loop's. */
export const CPU_RATIO_BOUND = 1.2;

/**
 * Each of Airlock's bursts over the other contestant's burst right after it, so both met the
 * same machine; none when either side's CPU could not be read.
 * @param {readonly number[] | null | undefined} airlock CPU per run, burst by burst
 * @param {readonly number[] | null | undefined} other
 * @returns {number[]}
 */
export function pairRatios(airlock, other) {
  if (!airlock || !other) return [];
  return airlock.map((cpu, round) => cpu / (other[round] ?? Number.NaN));
}
