// The scale page's CPU bound, read by the page (to add bursts while its verdict is
// undecided) and by the report (to judge it).

/** The agent worker's CPU time per run, at most this many times the raw worker loop's. */
export const CPU_RATIO_BOUND = 1.2;
