/**
 * The responsiveness meter: the time between animation frames over the last few seconds
 * as a bar graph, a marker that moves every frame, and the long frames of a measured
 * span. All of it is drawn from `requestAnimationFrame` on the page's main thread, so a
 * busy thread shows: the marker halts and jumps, and a tall bar appears. (A CSS animation
 * would run on the compositor and keep moving while the page is frozen.)
 */

/** A gap between frames longer than this is a long frame, as the peer bench counts them (`bench/peers/probes.ts`). */
export const LONG_FRAME_MS = 50;
/** The graph shows this much of the past. */
const WINDOW_MS = 5_000;
/** Frame times at or above this fill the graph's height. */
const GRAPH_CEILING_MS = 200;
/** One trip of the marker across its track and back. */
const MARKER_PERIOD_MS = 2_000;

/** The page elements the meter draws in. */
export interface FrameMeterElements {
  /**
   * Carries `data-long-frames`, `data-longest-frame` and `data-stalled-ms` of the measured
   * span, and `data-long-tasks` and `data-long-task-ms` where the browser reports long tasks
   * (Chromium).
   */
  readonly root: HTMLElement;
  readonly graph: HTMLCanvasElement;
  readonly track: HTMLElement;
  readonly marker: HTMLElement;
  /** Shows the latest frame time. */
  readonly frameTime: HTMLElement;
}

/** What a measured span saw. */
export interface FrameSpan {
  readonly longFrames: number;
  readonly longestFrameMs: number;
  /** The time the page drew nothing, summed over the long frames (each beyond one frame's 16.7 ms). */
  readonly stalledMs: number;
  /**
   * Tasks of the page thread that ran longer than 50 ms: the page itself was busy, where a
   * long frame may also be the machine's (another process took the core). Undefined where
   * the browser does not report long tasks (Firefox, WebKit).
   */
  readonly longTasks?: number;
  /** The long tasks' durations summed: what the page thread spent in them. */
  readonly longTaskMs?: number;
}

/** Whether this browser reports long tasks of the page thread. */
const LONG_TASKS_REPORTED =
  typeof PerformanceObserver !== 'undefined' &&
  PerformanceObserver.supportedEntryTypes.includes('longtask');

/** One frame at 60 Hz. */
const FRAME_MS = 1000 / 60;

/** A running meter. */
export interface FrameMeter {
  /** Starts a measured span: long frames are counted from now. */
  begin(): void;
  /** Ends the measured span and returns what it saw. */
  end(): FrameSpan;
  dispose(): void;
}

/** Starts the meter; it runs until disposed. */
export function startFrameMeter(elements: FrameMeterElements): FrameMeter {
  const { root, graph, track, marker, frameTime } = elements;
  const context = graph.getContext('2d');
  const frames: { at: number; gap: number }[] = [];
  let previous: number | undefined;
  let measuring = false;
  let span: {
    longFrames: number;
    longestFrameMs: number;
    stalledMs: number;
    longTasks?: number;
    longTaskMs?: number;
  } = { longFrames: 0, longestFrameMs: 0, stalledMs: 0 };
  let handle = 0;

  const showSpan = () => {
    root.dataset.longFrames = String(span.longFrames);
    root.dataset.longestFrame = String(Math.round(span.longestFrameMs));
    root.dataset.stalledMs = String(Math.round(span.stalledMs));
    if (span.longTasks !== undefined) root.dataset.longTasks = String(span.longTasks);
    if (span.longTaskMs !== undefined)
      root.dataset.longTaskMs = String(Math.round(span.longTaskMs));
  };

  /** When the measured span began: long tasks are reported after they end, some late. */
  let spanStart = 0;
  const countLongTasks = (entries: readonly PerformanceEntry[]) => {
    if (span.longTasks === undefined || span.longTaskMs === undefined) return;
    const inSpan = entries.filter((entry) => entry.startTime >= spanStart);
    span.longTasks += inSpan.length;
    span.longTaskMs += inSpan.reduce((sum, entry) => sum + entry.duration, 0);
    showSpan();
  };
  const longTasks = LONG_TASKS_REPORTED
    ? new PerformanceObserver((list) => {
        if (measuring) countLongTasks(list.getEntries());
      })
    : undefined;
  longTasks?.observe({ type: 'longtask' });

  const tick = (now: number) => {
    handle = requestAnimationFrame(tick);
    if (previous !== undefined) {
      const gap = now - previous;
      frames.push({ at: now, gap });
      while ((frames[0]?.at ?? now) < now - WINDOW_MS) frames.shift();
      if (measuring) {
        if (gap > LONG_FRAME_MS) {
          span.longFrames += 1;
          span.stalledMs += gap - FRAME_MS;
        }
        span.longestFrameMs = Math.max(span.longestFrameMs, gap);
        showSpan();
      }
      frameTime.textContent = `${Math.round(gap)} ms`;
    }
    previous = now;
    moveMarker(now);
    if (context) drawGraph(context, now);
  };

  const moveMarker = (now: number) => {
    const room = track.clientWidth - marker.offsetWidth;
    const phase = (now % MARKER_PERIOD_MS) / MARKER_PERIOD_MS;
    const across = phase < 0.5 ? phase * 2 : 2 - phase * 2;
    marker.style.transform = `translateX(${Math.round(across * room)}px)`;
  };

  const drawGraph = (draw: CanvasRenderingContext2D, now: number) => {
    const { width, height } = graph;
    const style = getComputedStyle(root);
    draw.clearRect(0, 0, width, height);
    // Each frame is a bar as wide as the time it took: a frozen page shows as a wide red block.
    for (const frame of frames) {
      const right = width - ((now - frame.at) / WINDOW_MS) * width;
      const barWidth = Math.max(1, (frame.gap / WINDOW_MS) * width - 0.5);
      const barHeight = (Math.min(frame.gap, GRAPH_CEILING_MS) / GRAPH_CEILING_MS) * height;
      draw.fillStyle = style.getPropertyValue(
        frame.gap > LONG_FRAME_MS ? '--meter-long' : '--meter-ok',
      );
      draw.fillRect(right - barWidth, height - barHeight, barWidth, barHeight);
    }
    // The 50 ms line: bars above it are long frames.
    const limit = height - (LONG_FRAME_MS / GRAPH_CEILING_MS) * height;
    draw.fillStyle = style.getPropertyValue('--meter-limit');
    draw.fillRect(0, Math.round(limit), width, 1);
  };

  // A hidden tab gets no frames: the gap on its return is the tab's, not the page's.
  const onVisibility = () => {
    previous = undefined;
  };
  document.addEventListener('visibilitychange', onVisibility);
  handle = requestAnimationFrame(tick);

  return {
    begin() {
      span = {
        longFrames: 0,
        longestFrameMs: 0,
        stalledMs: 0,
        ...(longTasks ? { longTasks: 0, longTaskMs: 0 } : {}),
      };
      spanStart = performance.now();
      measuring = true;
      showSpan();
    },
    end() {
      // Long tasks are reported after they end: take those of the span before closing it.
      if (longTasks) countLongTasks(longTasks.takeRecords());
      measuring = false;
      return { ...span };
    },
    dispose() {
      longTasks?.disconnect();
      cancelAnimationFrame(handle);
      document.removeEventListener('visibilitychange', onVisibility);
    },
  };
}
