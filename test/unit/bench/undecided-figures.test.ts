import { describe, expect, it } from 'vitest';
import {
  figuresOnTheirBound,
  firstTextExcessByRound,
  judgeTargets,
} from '../../../bench/lib/targets.mjs';

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)] as number;
  return { n: values.length, p50, p95: p50, min: sorted[0] ?? p50, max: sorted.at(-1) ?? p50 };
};

/** A round's figures: the page's second run's first text, and the runs after it when given. */
interface Round {
  readonly pageJsMs: number;
  readonly firstTextMs: number;
  readonly firstTextRunsMs?: readonly number[];
}

/** A contestant with one sample per round, each round's figures given. */
function contestant(loop: 'page' | 'worker', rounds: readonly Round[]) {
  const samples: (Round & { round: number })[] = rounds.map((figures, round) => ({
    round: round + 1,
    ...figures,
  }));
  return {
    loop,
    kind: 'baseline' as const,
    summary: {
      pageJsMs: summary(samples.map((sample) => sample.pageJsMs)),
      firstTextMs: summary(samples.map((sample) => sample.firstTextMs)),
      firstTextRunsMs: summary(
        samples.flatMap((sample) => sample.firstTextRunsMs ?? [sample.firstTextMs]),
      ),
    },
    samples,
  };
}

/** Three rounds: the page peer at 100 ms of JS and 10 ms to first text, the raw worker at 20 ms. */
function conversation(airlock: readonly Round[]) {
  return {
    contestants: {
      airlock: contestant('worker', airlock),
      'raw-worker': contestant('worker', [
        { pageJsMs: 3, firstTextMs: 20 },
        { pageJsMs: 3, firstTextMs: 20 },
        { pageJsMs: 3, firstTextMs: 20 },
      ]),
      'raw-page': contestant('page', [
        { pageJsMs: 100, firstTextMs: 10 },
        { pageJsMs: 100, firstTextMs: 10 },
        { pageJsMs: 100, firstTextMs: 10 },
      ]),
    },
  };
}

const steadyDelivery = [0.6, 0.7, 0.65].map((share) => ({
  portEventsPerSecond: 40_000,
  airlockEventsPerSecond: 40_000 * share,
}));

describe('the figures whose rounds fall on both sides of their bound', () => {
  it('names none when every round meets its bound, or every round misses it', () => {
    const met = [4, 3, 4.5].map((pageJsMs) => ({ pageJsMs, firstTextMs: 12 }));
    expect(figuresOnTheirBound(conversation(met), steadyDelivery)).toEqual([]);
    // First text misses in every round (over the page peer + 5 ms): a clear miss, not undecided.
    const missed = [6, 7, 8].map((pageJsMs) => ({ pageJsMs, firstTextMs: 25 }));
    expect(figuresOnTheirBound(conversation(missed), steadyDelivery)).toEqual([]);
  });

  it('names page JS, first text and delivery when their rounds straddle the bound', () => {
    const rounds = [
      { pageJsMs: 4, firstTextMs: 12 },
      { pageJsMs: 6, firstTextMs: 16 },
      { pageJsMs: 4.9, firstTextMs: 14 },
    ];
    const delivery = [0.45, 0.6, 0.55].map((share) => ({
      portEventsPerSecond: 50_000,
      airlockEventsPerSecond: 50_000 * share,
    }));
    expect(figuresOnTheirBound(conversation(rounds), delivery)).toEqual([
      'page JS',
      'first text',
      'delivery',
    ]);
  });

  it("judges a round's first text by the median of its page's timed runs", () => {
    // Each page's second run misses by far and its two later runs meet the bound: the
    // rounds do not straddle it, so no rounds are added for first text.
    const rounds = [12, 13, 12].map((secondRun) => ({
      pageJsMs: 4,
      firstTextMs: secondRun + 10,
      firstTextRunsMs: [secondRun + 10, secondRun, secondRun - 1],
    }));
    expect(figuresOnTheirBound(conversation(rounds), steadyDelivery)).toEqual([]);
    // The same later runs, one of them now over the bound in round 2: undecided.
    const straddling = rounds.map((round, index) =>
      index === 1 ? { ...round, firstTextRunsMs: [26, 16, 17] } : round,
    );
    expect(figuresOnTheirBound(conversation(straddling), steadyDelivery)).toEqual(['first text']);
  });

  it('pairs rounds by their number, so a round a contestant failed is left out', () => {
    const pairs = conversation([
      { pageJsMs: 4, firstTextMs: 12 },
      { pageJsMs: 4, firstTextMs: 12 },
      { pageJsMs: 4, firstTextMs: 12 },
    ]);
    // The page peer's round 2 failed; Airlock's round 2 would miss against round 3's peer.
    const peer = pairs.contestants['raw-page'];
    peer.samples = [
      { round: 1, pageJsMs: 100, firstTextMs: 10 },
      { round: 3, pageJsMs: 60, firstTextMs: 10 },
    ];
    pairs.contestants.airlock.samples = [
      { round: 1, pageJsMs: 4, firstTextMs: 12 },
      { round: 2, pageJsMs: 4, firstTextMs: 12 },
      { round: 3, pageJsMs: 2.9, firstTextMs: 12 },
    ];
    expect(figuresOnTheirBound(pairs, steadyDelivery)).toEqual([]);
  });
});

describe("Airlock's first text against the others, round by round", () => {
  it("takes each round's median of its page's timed runs, against the same round of each other", () => {
    const rounds = conversation([
      { pageJsMs: 4, firstTextMs: 30, firstTextRunsMs: [30, 22, 21] },
      { pageJsMs: 4, firstTextMs: 19 },
      { pageJsMs: 4, firstTextMs: 25, firstTextRunsMs: [25, 24, 18] },
    ]);
    expect(firstTextExcessByRound(rounds.contestants, 'raw-page')).toEqual([
      { round: 1, overRaw: 2, overPeer: 12 },
      { round: 2, overRaw: -1, overPeer: 9 },
      { round: 3, overRaw: 4, overPeer: 14 },
    ]);
  });

  it('leaves out a round that Airlock, the raw worker or the peer lacks', () => {
    const rounds = conversation([
      { pageJsMs: 4, firstTextMs: 21 },
      { pageJsMs: 4, firstTextMs: 22 },
      { pageJsMs: 4, firstTextMs: 23 },
    ]);
    rounds.contestants['raw-worker'].samples = rounds.contestants['raw-worker'].samples.filter(
      (sample) => sample.round !== 2,
    );
    rounds.contestants['raw-page'].samples = rounds.contestants['raw-page'].samples.filter(
      (sample) => sample.round !== 3,
    );
    expect(firstTextExcessByRound(rounds.contestants, 'raw-page')).toEqual([
      { round: 1, overRaw: 1, overPeer: 11 },
    ]);
  });

  it('gives the verdict the spread of the excess over the raw loop', () => {
    const { contestants } = conversation([
      { pageJsMs: 4, firstTextMs: 21 },
      { pageJsMs: 4, firstTextMs: 18.5 },
      { pageJsMs: 4, firstTextMs: 24 },
    ]);
    const results = {
      scenario: { textDeltas: 2_000, steps: 5 },
      contestants: {
        airlock: { label: 'Airlock', ...contestants.airlock },
        'raw-worker': { label: 'hand-written loop, worker', ...contestants['raw-worker'] },
        'raw-page': { label: 'hand-written loop, page', ...contestants['raw-page'] },
      },
      perStep: {
        extraMsPerStep: 0,
        overheadPercent: 0,
        overheadPercentPerRound: summary([0]),
        airlockMsPerStep: summary([40]),
        rawWorkerMsPerStep: summary([40]),
      },
      delivery: { summary: {} },
      bundles: {
        airlockLibrary: {
          page: { bytes: 20_000, gzipBytes: 4_000, chunks: 1, largest: [] },
          worker: { bytes: 400_000, gzipBytes: 120_000, chunks: 1, largest: [] },
        },
      },
    };
    const firstText = judgeTargets(results, undefined).find(({ key }) => key === 'first-text');
    expect(firstText?.measured).toContain(
      'raw loop in a worker 20.0 ms (+1.0; round by round -1.5 to +4.0)',
    );
  });
});
