// What the page sees while a run streams: long tasks and gaps between animation frames.

/** Frame gaps above this count as a visible stall, as do long tasks. */
const STALL_MS = 50;

/** Long tasks observed since the page loaded; filter by time to get a run's. */
export function observeLongTasks(): { between(start: number, end: number): PerformanceEntry[] } {
  const entries: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ type: 'longtask', buffered: true });
  return {
    between: (start, end) =>
      entries.filter((entry) => entry.startTime >= start && entry.startTime < end),
  };
}

/** What the frame probe saw. */
export interface FrameReport {
  readonly frames: number;
  readonly maxGapMs: number;
  /** Gaps between consecutive frames longer than {@link STALL_MS}. */
  readonly gapsOver50: number;
}

/** Records requestAnimationFrame timestamps until stopped. */
export function startFrameProbe(): { stop(): FrameReport } {
  const stamps: number[] = [];
  let handle = 0;
  const tick = (time: number) => {
    stamps.push(time);
    handle = requestAnimationFrame(tick);
  };
  handle = requestAnimationFrame(tick);
  return {
    stop() {
      cancelAnimationFrame(handle);
      let maxGapMs = 0;
      let gapsOver50 = 0;
      for (let i = 1; i < stamps.length; i++) {
        const gap = stamps[i]! - stamps[i - 1]!;
        maxGapMs = Math.max(maxGapMs, gap);
        if (gap > STALL_MS) gapsOver50++;
      }
      return { frames: stamps.length, maxGapMs, gapsOver50 };
    },
  };
}
