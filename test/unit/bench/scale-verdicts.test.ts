import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noVerdictReason } from '../../../bench/lib/load-check.mjs';
import { readHistory, recordRun } from '../../../bench/lib/run-history.mjs';
import { recordedVerdicts, scaleSection, scaleTargets } from '../../../bench/scale-section.mjs';

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

    // The median's interval, and the bursts added while it held the bound.
    const added = scaleSection(
      {
        ...file,
        scale: {
          ...file.scale,
          concurrentRuns: {
            ...file.scale.concurrentRuns,
            rounds: 25,
            addedRounds: 10,
            cpuRatioInterval: { low: 1.12, high: 1.19 },
          },
        },
      },
      undefined,
    );
    expect(added).toMatch(
      /CPU time per run.*1\.17×; 95 % interval of the median 1\.12–1\.19 \(10 bursts added, the interval after 15 holding the bound\).*\| \*\*met\*\* \|/,
    );

    file.scale.concurrentRuns.agentCpuMsPerRun = null;
    file.scale.concurrentRuns.cpuRatioToRawLoop = null;
    expect(scaleSection(file, undefined)).toMatch(
      /CPU time per run.*\| not measured: no \/proc to read worker threads from \| not judged \|/,
    );
  });
});

const knowledge = (firstAnswerMs50k: number, date = '2026-12-01T03:00:00.000Z') => ({
  date,
  machine: { cores: 2, loadAverage: { start: [0.5], end: [0.5] } },
  knowledge: { searchMs: { '100k': summary(4) }, firstAnswerMs50k, exactIndexMs50k: 1_400 },
});

describe('the knowledge rows of the scale section', () => {
  it("judges the cold load by the first query's answer, and shows when the index became exact", () => {
    expect(scaleSection(scaleFile(0.5), knowledge(320))).toMatch(
      /first query answered \(from the vectors' int8 copies\) ≤ 500 ms \| 320 ms \(the floats read and the index exact after 1400 ms\) \| \*\*met\*\* \|/,
    );
    expect(scaleSection(scaleFile(0.5), knowledge(620))).toMatch(
      /first query answered.*\| 620 ms .*\| \*\*missed\*\* \|/,
    );
  });
});

describe('the scale run after run', () => {
  /** A scale run at `load` whose CPU ratio is `cpuRatio`, its other targets met. */
  function scaleRun(hour: number, cpuRatio: number, load = 0.5) {
    const file = scaleFile(load);
    file.date = `2026-12-01T0${hour}:00:00.000Z`;
    file.scale.concurrentRuns.cpuRatioToRawLoop = cpuRatio;
    file.scale.sandboxBurst.liveWorkersAfter = 3;
    file.scale.conversationList.nextPageMs = summary(4);
    return file;
  }

  it("keeps each page's judged targets with their short measure, and says which held in all three", () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-scale-history-'));
    const scalePath = join(dir, 'scale-history.json');
    const knowledgePath = join(dir, 'knowledge-history.json');
    const record = (file: ReturnType<typeof scaleRun>) =>
      recordRun(
        scalePath,
        { ...file, revision: 'abc1234' },
        recordedVerdicts(scaleTargets(file, undefined)),
      );
    record(scaleRun(1, 1.15));
    record(scaleRun(2, 1.25));
    record(scaleRun(3, 1.18));
    for (const [index, first] of [300, 320, 340].entries()) {
      const file = knowledge(first, `2026-12-01T0${index + 1}:05:00.000Z`);
      recordRun(knowledgePath, file, recordedVerdicts(scaleTargets(undefined, file)));
    }

    const kept = readHistory(scalePath);
    expect(kept).toHaveLength(3);
    // Only judged rows are kept (not the whole list at once, nor the storing loop's).
    expect(kept[0]?.verdicts.map((verdict) => verdict.key)).toEqual([
      'concurrent-wall',
      'concurrent-cpu',
      'concurrent-long-tasks',
      'sandbox-burst',
      'sandbox-shrink',
      'list-first-page',
      'list-next-page',
    ]);
    expect(kept[1]?.verdicts.find((verdict) => verdict.key === 'concurrent-cpu')).toMatchObject({
      measured: '1.25× (9.0 vs 6.0 ms)',
      met: false,
    });

    const section = scaleSection(scaleRun(3, 1.18), knowledge(340), {
      scale: kept,
      knowledge: readHistory(knowledgePath),
    });
    const afterRuns = section.slice(section.indexOf('### Run after run'));
    // Met in runs 1 and 3 but not 2: it did not hold.
    expect(afterRuns).toMatch(
      /CPU time per run.*\| 1\.15× .*\*\*met\*\* \| 1\.25× .*\*\*missed\*\* \| 1\.18× .*\*\*met\*\* \| no \|$/m,
    );
    expect(afterRuns).toMatch(/each run's wall time ≤ 1\.5×.*\| \*\*yes\*\* \|$/m);
    expect(afterRuns).toMatch(
      /cold load at 50,000 chunks.*\| 340 ms: \*\*met\*\* \| \*\*yes\*\* \|$/m,
    );
    expect(afterRuns).toContain('- scale page: run 1: 2026-12-01 01:00 on abc1234, load 0.5');
    expect(afterRuns).toContain('- knowledge page: run 1: 2026-12-01 01:05, load 0.5');

    // A busy run: no verdict, so nothing holds until three quiet runs follow.
    record(scaleRun(4, 1.1, 9));
    const busy = scaleSection(scaleRun(4, 1.1, 9), undefined, {
      scale: readHistory(scalePath),
      knowledge: [],
    });
    expect(busy).toMatch(/each run's wall time ≤ 1\.5×.*no verdict \| no \|$/m);
    expect(busy).toContain('- knowledge page: no runs recorded');
  });
});

describe('the scale section when a run leaves one page out', () => {
  it("shows the left-out page's last recorded verdicts, since its figures are not committed", () => {
    const knowledgeHistory = [
      {
        date: '2026-12-01T02:00:00.000Z',
        machine: { cores: 2, loadAverage: { start: [0.5, 0.5, 0.5], end: [1, 1, 1] } },
        verdicts: [
          {
            key: 'knowledge-search',
            target: 'Knowledge search ≤ 15 ms p50',
            measured: '5.1 ms p50',
            met: true,
          },
        ],
      },
    ];
    const section = scaleSection(scaleFile(0.5), undefined, {
      scale: [],
      knowledge: knowledgeHistory,
    });
    expect(section).toContain('| Knowledge search ≤ 15 ms p50 | 5.1 ms p50 | **met** |');
    expect(section).toMatch(/knowledge page 2026-12-01T02:00: .*\(not in this run/);
    expect(section).toMatch(/20 runs at once on one agent/);
  });
});
