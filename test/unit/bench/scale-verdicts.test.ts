import { describe, expect, it } from 'vitest';
import { noVerdictReason } from '../../../bench/lib/load-check.mjs';
import { scaleSection } from '../../../bench/scale-section.mjs';

const summary = (p50: number) => ({ n: 5, p50, p95: p50, min: p50, max: p50 });

function scaleFile(load: number) {
  return {
    date: '2026-12-01T03:00:00.000Z',
    machine: { cores: 2, loadAverage: { start: [load, load, load], end: [load, load, load] } },
    scale: {
      concurrentRuns: {
        runs: 20,
        chunkDelayMs: 20,
        wordsPerReply: 30,
        loneRunMs: summary(700),
        concurrentRunMs: summary(800),
        ratioToLone: { n: 20, p50: 1.1, p95: 1.2, min: 1, max: 1.2 },
        burstMs: 900,
        longTasks: 0,
        agentCpuMsPerRun: 9 as number | null,
        rawLoop: { loneRunMs: summary(690), concurrentRunMs: summary(700), cpuMsPerRun: 6 },
        cpuRatioToRawLoop: 1.5 as number | null,
      },
      sandboxBurst: {
        calls: 100,
        maxConcurrency: 16,
        poolSize: 1,
        failed: 0,
        callsPerSecond: 500,
        callMs: summary(10),
        peakLiveWorkers: 17,
        liveWorkersAfter: 5,
        expectedLiveWorkersAfter: 3,
        workersStarted: 18,
      },
      conversationList: {
        conversations: 1_000,
        messages: 100_000,
        pageSize: 50,
        firstPageMs: summary(3),
        nextPageMs: summary(24),
        wholeListMs: summary(30),
      },
    },
  };
}

describe('bench verdicts and the machine load', () => {
  it('refuses a verdict when the load average at the start exceeds the cores, and says why', () => {
    expect(noVerdictReason({ cores: 2, loadAverage: { start: [1.5] } })).toBeUndefined();
    expect(noVerdictReason({ cores: 2, loadAverage: { start: [2] } })).toBeUndefined();
    expect(noVerdictReason({ cores: 2, loadAverage: { start: [2.1] } })).toContain(
      'load average at the start (2.1) exceeded the 2 cores',
    );
    // A run that did not record its machine is not judged either.
    expect(noVerdictReason(undefined)).toContain('not recorded');
  });

  it('judges the scale figures on a quiet machine, and only reports them on a busy one', () => {
    const quiet = scaleSection(scaleFile(0.5), undefined);
    expect(quiet).toMatch(/each run's wall time ≤ 1\.5× a lone run's \|.*\| \*\*met\*\* \|/);
    // Five live workers after the burst where three were expected: the shrink target is missed.
    expect(quiet).toMatch(/shrinks back.*\| \*\*missed\*\* \|/);
    // 9 ms of worker CPU per run against the plain loop's 6: 1.5×, over the 1.2× bound.
    expect(quiet).toMatch(
      /CPU time per run.*9\.0 ms vs 6\.0 ms per run: 1\.5×.*\| \*\*missed\*\* \|/,
    );
    expect(quiet).not.toContain('no verdict:');
    // The list is judged by its pages; the whole list at once is only reported.
    expect(quiet).toMatch(/its first page \(50 conversations\) ≤ 20 ms p50 \|.*\| \*\*met\*\* \|/);
    expect(quiet).toMatch(/The page after it.*\| \*\*missed\*\* \|/);
    expect(quiet).toMatch(/The whole list at once, all 1,000.*\| not judged \|/);

    const busy = scaleSection(scaleFile(9), undefined);
    expect(busy).not.toContain('**met**');
    expect(busy).not.toContain('**missed**');
    expect(busy).toContain('no verdict: the load average at the start (9.0) exceeded the 2 cores');
  });
});

describe('the CPU row of the scale section', () => {
  it('is met at or under 1.2× the plain loop, and not judged where /proc could not be read', () => {
    const file = scaleFile(0.5);
    file.scale.concurrentRuns.agentCpuMsPerRun = 7;
    file.scale.concurrentRuns.cpuRatioToRawLoop = 1.17;
    expect(scaleSection(file, undefined)).toMatch(/CPU time per run.*1\.17×.*\| \*\*met\*\* \|/);

    // Beside it, the loop that stores each run's input and answer: reported, never judged.
    const storing = scaleSection(
      {
        ...file,
        scale: {
          ...file.scale,
          concurrentRuns: {
            ...file.scale.concurrentRuns,
            storingLoop: { concurrentRunMs: summary(705), cpuMsPerRun: 5 },
            cpuRatioToStoringLoop: 1.4,
          },
        },
      },
      undefined,
    );
    expect(storing).toMatch(
      /same loop storing each run's input and answer.*\| 7\.0 ms vs 5\.0 ms per run: 1\.4× \| not judged \|/,
    );

    file.scale.concurrentRuns.agentCpuMsPerRun = null;
    file.scale.concurrentRuns.cpuRatioToRawLoop = null;
    expect(scaleSection(file, undefined)).toMatch(
      /CPU time per run.*\| not measured: no \/proc to read worker threads from \| not judged \|/,
    );
  });
});

describe('the knowledge rows of the scale section', () => {
  it("judges the cold load by the first query's answer, and shows when the index became exact", () => {
    const knowledge = (firstAnswerMs50k: number) => ({
      date: '2026-12-01T03:00:00.000Z',
      machine: { cores: 2, loadAverage: { start: [0.5], end: [0.5] } },
      knowledge: { searchMs: { '100k': summary(4) }, firstAnswerMs50k, exactIndexMs50k: 1_400 },
    });
    expect(scaleSection(scaleFile(0.5), knowledge(320))).toMatch(
      /first query answered \(from the vectors' int8 copies\) ≤ 500 ms \| 320 ms \(the floats read and the index exact after 1400 ms\) \| \*\*met\*\* \|/,
    );
    expect(scaleSection(scaleFile(0.5), knowledge(620))).toMatch(
      /first query answered.*\| 620 ms .*\| \*\*missed\*\* \|/,
    );
  });
});
