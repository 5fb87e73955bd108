// Airlock's targets, judged against bench/results/peers.json: met or missed, by how much,
// and, for a miss, what the figures say would close it.

/** @typedef {{ n: number; p50: number; p95: number; min: number; max: number }} Summary */
/** @typedef {{ module: string; share: number; gzipBytes: number }} ModuleSize */
/** @typedef {{ bytes: number; gzipBytes: number; chunks: number; largest: ModuleSize[] }} BundleSize */
/**
 * The parts of peers.json the targets read.
 * @typedef {{
 *   scenario: { textDeltas: number; steps: number };
 *   contestants: Record<string, { label: string; loop: 'page' | 'worker'; kind: 'library' | 'baseline'; summary: Record<string, Summary>; samples: readonly RoundSample[] }>;
 *   perStep: { extraMsPerStep: number; overheadPercent: number; overheadPercentPerRound: Summary; airlockMsPerStep: Summary; rawWorkerMsPerStep: Summary };
 *   delivery: { summary: Record<string, Summary> };
 *   bundles: { airlockLibrary: { page: BundleSize; worker: BundleSize } };
 * }} PeersResults
 */
/**
 * One page's figures, as the targets read them (the fields a scenario does not measure are absent).
 * @typedef {{ round?: number | undefined; firstTextMs?: number | undefined; firstTextRunsMs?: readonly number[] | undefined; pageJsMs?: number | undefined; longTasks?: number | undefined }} RoundSample
 */
/**
 * A contestant's figures, as `figuresOnTheirBound` reads them.
 * @typedef {{
 *   loop: 'page' | 'worker';
 *   kind: 'library' | 'baseline';
 *   summary: Record<string, Summary>;
 *   samples: readonly RoundSample[];
 * }} RoundsOf
 */
/**
 * @typedef {{
 *   key: string;
 *   target: string;
 *   measured: string;
 *   met: boolean;
 *   by: string;
 *   close: string;
 * }} TargetVerdict
 */

const KB = 1024;
/** Airlock's page JS time, as a share of the best page-thread peer's, at most. */
const PAGE_JS_PERCENT = 5;
/** Airlock's time to first text, at most this much over the raw loop in a worker's… */
const FIRST_TEXT_OVER_RAW_WORKER_MS = 3;
/** …and over the best page-thread peer's. */
const FIRST_TEXT_OVER_PAGE_PEER_MS = 5;
/** Airlock's text-delta delivery, as a share of a raw MessagePort's, at least. */
const DELIVERY_PERCENT = 50;

/** Where a miss of the first-text target sends the reader: the traces and what was tried. */
const FIRST_TEXT_NOTES =
  'Where the time goes on that path, and what was tried on it: [Tuning notes](docs/contributing.md#tuning-notes).';

/**
 * The first-text figure the target reads: each page's runs 2, 4 and 5 together (`firstTextMs` is
 * the second run alone).
 */
const FIRST_TEXT = 'firstTextRunsMs';

const kb = (/** @type {number} */ bytes) => `${(bytes / KB).toFixed(1)} KB`;
const signed = (/** @type {number} */ value) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
/** The middle value (the mean of the two middle ones for an even count). */
const median = (/** @type {readonly number[]} */ values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
};
const pct = (/** @type {number} */ value) => `${value.toFixed(1)} %`;
const points = (/** @type {number} */ value) => `${value.toFixed(1)} points`;

/**
 * The page-loop contestant with the lowest median of `metric` (among libraries only, with
 * `librariesOnly`).
 * @template {Pick<RoundsOf, 'loop' | 'kind' | 'summary'>} Contestant
 * @param {{ contestants: Record<string, Contestant> }} results
 * @param {string} metric
 * @param {boolean} [librariesOnly]
 */
export function bestPagePeer(results, metric, librariesOnly = false) {
  const candidates = Object.entries(results.contestants)
    .filter(([, contestant]) => contestant.loop === 'page')
    .filter(([, contestant]) => !librariesOnly || contestant.kind === 'library')
    .map(([name, contestant]) => ({ name, contestant, p50: contestant.summary[metric]?.p50 }))
    .filter((entry) => typeof entry.p50 === 'number' && Number.isFinite(entry.p50))
    .sort((a, b) => /** @type {number} */ (a.p50) - /** @type {number} */ (b.p50));
  return candidates[0];
}

/**
 * `name`'s page of `round`, if it has one: rounds are paired by their number, since a
 * contestant whose page failed has no sample for that round.
 * @param {Record<string, { samples: readonly RoundSample[] }>} contestants
 * @param {string} name
 * @param {number | undefined} round
 */
const sampleInRound = (contestants, name, round) =>
  contestants[name]?.samples.find((sample) => sample.round === round);

/**
 * Airlock's page JS time as a percentage of `peer`'s, round by round: each Airlock run
 * against the peer's run of the same round (they ran back to back); a round either one
 * lacks is left out.
 * @param {Record<string, { samples: readonly RoundSample[] }>} contestants
 * @param {string} peer
 * @returns {number[]}
 */
function pageJsPercentByRound(contestants, peer) {
  return (contestants.airlock?.samples ?? []).flatMap((sample) => {
    const peerJs = sampleInRound(contestants, peer, sample.round)?.pageJsMs;
    return typeof sample.pageJsMs === 'number' && typeof peerJs === 'number' && peerJs > 0
      ? [(sample.pageJsMs / peerJs) * 100]
      : [];
  });
}

/**
 * How far Airlock's first text is behind the raw loop in a worker and behind `peer`, round
 * by round: each round's figure is the median of its page's timed runs, against the same
 * round's pages of the others; a round any of the three lacks is left out.
 * @param {Record<string, { samples: readonly RoundSample[] }>} contestants
 * @param {string} peer
 * @returns {{ round: number; overRaw: number; overPeer: number }[]}
 */
export function firstTextExcessByRound(contestants, peer) {
  /** A round's first text: the median of the page's timed runs. */
  const firstTextOf = (/** @type {string} */ name, /** @type {number} */ round) => {
    const sample = sampleInRound(contestants, name, round);
    const runs =
      sample?.firstTextRunsMs ?? (sample?.firstTextMs === undefined ? [] : [sample.firstTextMs]);
    return runs.length > 0 ? median(runs) : undefined;
  };
  return (contestants.airlock?.samples ?? []).flatMap(({ round }) => {
    if (round === undefined) return [];
    const own = firstTextOf('airlock', round);
    const raw = firstTextOf('raw-worker', round);
    const other = firstTextOf(peer, round);
    return own === undefined || raw === undefined || other === undefined
      ? []
      : [{ round, overRaw: own - raw, overPeer: own - other }];
  });
}

/**
 * The target figures whose rounds fall on both sides of their bound: page JS and first
 * text (each round's Airlock run against the same round's runs of the others) and
 * delivery (each round's page). Their verdict is then the toss of a median, so the bench
 * runs more rounds of them.
 * @param {{ contestants: Record<string, RoundsOf> }} conversation
 * @param {readonly { portEventsPerSecond: number; airlockEventsPerSecond: number }[]} delivery
 * @returns {string[]} the figures' names
 */
export function figuresOnTheirBound(conversation, delivery) {
  /** @param {(number | undefined)[]} margins how far each round is inside its bound (negative: outside) */
  const straddles = (margins) => {
    const known = margins.flatMap((margin) =>
      margin !== undefined && Number.isFinite(margin) ? [margin] : [],
    );
    return known.some((margin) => margin >= 0) && known.some((margin) => margin < 0);
  };
  const figures = [];
  const jsPeer = bestPagePeer(conversation, 'pageJsMs');
  if (
    jsPeer &&
    straddles(
      pageJsPercentByRound(conversation.contestants, jsPeer.name).map(
        (percent) => PAGE_JS_PERCENT - percent,
      ),
    )
  )
    figures.push('page JS');
  const textPeer = bestPagePeer(conversation, FIRST_TEXT);
  if (
    textPeer &&
    straddles(
      firstTextExcessByRound(conversation.contestants, textPeer.name).map(({ overRaw, overPeer }) =>
        Math.min(FIRST_TEXT_OVER_RAW_WORKER_MS - overRaw, FIRST_TEXT_OVER_PAGE_PEER_MS - overPeer),
      ),
    )
  )
    figures.push('first text');
  if (
    straddles(
      delivery.map(
        (round) =>
          (round.airlockEventsPerSecond / round.portEventsPerSecond) * 100 - DELIVERY_PERCENT,
      ),
    )
  )
    figures.push('delivery');
  return figures;
}

/**
 * The largest parts of a bundle, for a line of prose.
 * @param {BundleSize} bundle
 * @param {number} count
 */
function largestParts(bundle, count) {
  return bundle.largest
    .slice(0, count)
    .map((part) => `${part.module} ~${kb(part.gzipBytes)}`)
    .join(', ');
}

/**
 * @param {PeersResults} results
 * @param {{ appendStepMs?: Summary } | undefined} memory figures from memory.json, if any
 * @returns {TargetVerdict[]}
 */
export function judgeTargets(results, memory) {
  const airlock = results.contestants.airlock;
  const rawWorker = results.contestants['raw-worker'];
  if (!airlock) return [];
  const verdicts = [];

  // Page-thread script time.
  const best = bestPagePeer(results, 'pageJsMs');
  const bestLibrary = bestPagePeer(results, 'pageJsMs', true);
  const airlockJs = airlock.summary.pageJsMs?.p50;
  if (best && typeof airlockJs === 'number' && typeof best.p50 === 'number') {
    const share = (airlockJs / best.p50) * 100;
    const allowed = best.p50 * (PAGE_JS_PERCENT / 100);
    const perDeltaUs = (airlockJs * 1000) / results.scenario.textDeltas;
    const rawJs = rawWorker?.summary.pageJsMs?.p50 ?? Number.NaN;
    const rawPerDeltaUs = (rawJs * 1000) / results.scenario.textDeltas;
    const rawShare = (rawJs / best.p50) * 100;
    const floor = Number.isFinite(rawShare)
      ? rawShare <= PAGE_JS_PERCENT
        ? `The raw worker loop, also one message per delta, costs the page ${rawPerDeltaUs.toFixed(1)} µs per delta (${pct(rawShare)} of the best page-thread peer), so one message per delta can meet it: trimming Airlock's per-event path on the page (the run's queue and async iterator, the acknowledgement messages) would close it, and so would posting the events ready in one worker task as one message.`
        : `Even the raw worker loop, one message per delta, costs the page ${rawPerDeltaUs.toFixed(1)} µs per delta (${pct(rawShare)} of the best page-thread peer): only fewer, larger messages (the events ready in one worker task posted as one) would close it.`
      : '';
    // The ratio round by round: its spread says how far one median ratio can be trusted.
    const perRound = pageJsPercentByRound(results.contestants, best.name);
    const roundSpread =
      perRound.length > 1
        ? `; round by round ${pct(Math.min(...perRound))} to ${pct(Math.max(...perRound))}`
        : '';
    verdicts.push({
      key: 'page-js',
      target: `Airlock page-thread JS time ≤ ${PAGE_JS_PERCENT} % of the best page-thread peer (${best.contestant.label})`,
      measured:
        `${airlockJs.toFixed(1)} ms vs ${best.p50.toFixed(1)} ms: ${pct(share)}${roundSpread}` +
        (bestLibrary && bestLibrary.name !== best.name && typeof bestLibrary.p50 === 'number'
          ? `; against the best library, ${bestLibrary.contestant.label} (${bestLibrary.p50.toFixed(1)} ms): ${pct((airlockJs / bestLibrary.p50) * 100)}`
          : ''),
      met: share <= PAGE_JS_PERCENT,
      by:
        share <= PAGE_JS_PERCENT
          ? `${(allowed - airlockJs).toFixed(1)} ms to spare`
          : `${(airlockJs - allowed).toFixed(1)} ms (${points(share - PAGE_JS_PERCENT)})`,
      close:
        share <= PAGE_JS_PERCENT
          ? ''
          : `Airlock's page spends about ${perDeltaUs.toFixed(1)} µs of JavaScript per text delta (a message event, a structured clone, an async-iterator step). ${floor}`,
    });
  }

  // Time to the first text delta, over each page's runs 2, 4 and 5.
  const firstText = airlock.summary[FIRST_TEXT]?.p50;
  const rawFirstText = rawWorker?.summary[FIRST_TEXT]?.p50;
  const quickest = bestPagePeer(results, FIRST_TEXT);
  if (
    typeof firstText === 'number' &&
    typeof rawFirstText === 'number' &&
    typeof quickest?.p50 === 'number'
  ) {
    const overRaw = firstText - rawFirstText;
    const secondRun = airlock.summary.firstTextMs?.p50;
    const rawSecondRun = rawWorker?.summary.firstTextMs?.p50;
    const secondRuns =
      secondRun === undefined || rawSecondRun === undefined
        ? 'not measured'
        : `${secondRun.toFixed(1)} ms against ${rawSecondRun.toFixed(1)} ms (${signed(secondRun - rawSecondRun)})`;
    const overPeer = firstText - quickest.p50;
    // The excess round by round: its spread says how far one difference of medians can be trusted.
    const perRound = firstTextExcessByRound(results.contestants, quickest.name).map(
      ({ overRaw: excess }) => excess,
    );
    const roundSpread =
      perRound.length > 1
        ? `; round by round ${signed(Math.min(...perRound))} to ${signed(Math.max(...perRound))}`
        : '';
    const miss = Math.max(
      overRaw - FIRST_TEXT_OVER_RAW_WORKER_MS,
      overPeer - FIRST_TEXT_OVER_PAGE_PEER_MS,
    );
    // The raw loop in a worker stores nothing; when even it misses the page-thread bound, a
    // loop in a worker cannot meet that bound in this run, whatever Airlock does.
    const rawOverPeer = rawFirstText - quickest.p50;
    const workerBound =
      rawOverPeer > FIRST_TEXT_OVER_PAGE_PEER_MS
        ? `The raw loop in a worker, which stores nothing, is itself ${rawOverPeer.toFixed(1)} ms over ${quickest.contestant.label}: a loop in a worker misses the page-thread bound in this run whatever it does. `
        : '';
    verdicts.push({
      key: 'first-text',
      target: `Airlock's time to the first text delta ≤ the raw loop in a worker's + ${FIRST_TEXT_OVER_RAW_WORKER_MS} ms and ≤ the best page-thread peer's + ${FIRST_TEXT_OVER_PAGE_PEER_MS} ms`,
      measured: `${firstText.toFixed(1)} ms over runs 2, 4 and 5 of each page; raw loop in a worker ${rawFirstText.toFixed(1)} ms (${signed(overRaw)}${roundSpread}); ${quickest.contestant.label} ${quickest.p50.toFixed(1)} ms (${signed(overPeer)}). Each page's second run alone: ${secondRuns}`,
      met: miss <= 0,
      by: miss <= 0 ? `${(-miss).toFixed(1)} ms to spare` : `${miss.toFixed(1)} ms`,
      close: miss <= 0 ? '' : `${workerBound}${FIRST_TEXT_NOTES}`,
    });
  }

  // Long tasks during Airlock runs.
  const longTasks = airlock.samples.map((sample) => sample.longTasks ?? 0);
  const worst = Math.max(0, ...longTasks);
  const runsWith = longTasks.filter((count) => count > 0).length;
  verdicts.push({
    key: 'long-tasks',
    target: '0 long tasks (> 50 ms) on the page during an Airlock run',
    measured: `${runsWith} of ${longTasks.length} runs had any; at most ${worst}`,
    met: worst === 0,
    by: worst === 0 ? '' : `${worst} long task(s) in the worst run`,
    close:
      worst === 0
        ? ''
        : "Look at the long tasks' attribution in a trace of an Airlock run: on a quiet machine none are expected, since the page only dispatches events.",
  });

  // Bundle sizes.
  const { page, worker } = results.bundles.airlockLibrary;
  const pageLimit = 5 * KB;
  const pageClose = [];
  const partGzip = (/** @type {string} */ module) =>
    page.largest.find((part) => part.module === module)?.gzipBytes;
  const comlink = partGzip('comlink');
  if (comlink) {
    pageClose.push(
      `a small message protocol on the run's own ports in place of Comlink on the page (Comlink is ~${kb(comlink)})`,
    );
  }
  const checks =
    (partGzip('src/page/check-options.ts') ?? 0) + (partGzip('src/page/agent-setup.ts') ?? 0);
  if (checks) {
    pageClose.push(
      `keeping the option checks and the config they make in the agent's start, which loads with a dynamic import (in the entry they are ~${kb(checks)})`,
    );
  }
  const iframe = partGzip('src/page/iframe-sandbox.ts');
  const sandboxHost = partGzip('src/page/sandbox-host.ts');
  if (iframe || sandboxHost) {
    pageClose.push(
      `loading the sandbox host and the iframe tier only when toolsets are given, with a dynamic import (~${kb((iframe ?? 0) + (sandboxHost ?? 0))})`,
    );
  }
  verdicts.push({
    key: 'page-entry',
    target: 'Airlock page entry ≤ 5 KB gzip',
    measured: `${kb(page.gzipBytes)} gzip (${kb(page.bytes)} minified)`,
    met: page.gzipBytes <= pageLimit,
    by:
      page.gzipBytes <= pageLimit
        ? `${kb(pageLimit - page.gzipBytes)} to spare`
        : kb(page.gzipBytes - pageLimit),
    close:
      page.gzipBytes <= pageLimit
        ? ''
        : `Largest parts (share of the gzip): ${largestParts(page, 5)}. ${pageClose.length > 0 ? `What would close it: ${pageClose.join('; ')}.` : ''}`,
  });
  const workerLimit = 130 * KB;
  verdicts.push({
    key: 'worker-size',
    target: 'Airlock worker ≤ 130 KB gzip',
    measured: `${kb(worker.gzipBytes)} gzip (${kb(worker.bytes)} minified)`,
    met: worker.gzipBytes <= workerLimit,
    by:
      worker.gzipBytes <= workerLimit
        ? `${kb(workerLimit - worker.gzipBytes)} to spare`
        : kb(worker.gzipBytes - workerLimit),
    close:
      worker.gzipBytes <= workerLimit
        ? ''
        : `Largest parts (share of the gzip): ${largestParts(worker, 5)}.`,
  });

  // Delivery.
  const delivery = results.delivery.summary;
  const share = delivery.airlockPercentOfPort?.p50;
  const rawShare = delivery.rawWorkerPercentOfPort?.p50;
  if (typeof share === 'number') {
    verdicts.push({
      key: 'delivery',
      target: `Text-delta delivery ≥ ${DELIVERY_PERCENT} % of raw MessagePort throughput`,
      measured: `${Math.round(delivery.airlockEventsPerSecond?.p50 ?? 0).toLocaleString('en-US')} vs ${Math.round(delivery.portEventsPerSecond?.p50 ?? 0).toLocaleString('en-US')} events/s: ${pct(share)} (round by round ${pct(delivery.airlockPercentOfPort?.min ?? Number.NaN)} to ${pct(delivery.airlockPercentOfPort?.max ?? Number.NaN)})`,
      met: share >= DELIVERY_PERCENT,
      by:
        share >= DELIVERY_PERCENT
          ? `${points(share - DELIVERY_PERCENT)} to spare`
          : points(DELIVERY_PERCENT - share),
      close:
        share >= DELIVERY_PERCENT
          ? ''
          : `Airlock already sends the events of one worker task as one message. The raw loop in a worker, which parses the same stream with \`openai\` and does nothing else, reaches ${pct(rawShare ?? Number.NaN)} of the port's rate, so the bound is the work per event in the worker: parsing each SSE event, the loop's bookkeeping and the journal's. A coarser event (several deltas per text-delta, when they arrive in one read) is what would close it.`,
    });
  }

  // Per-step overhead.
  const overhead = results.perStep.overheadPercent;
  const extra = results.perStep.extraMsPerStep;
  const perRound = results.perStep.overheadPercentPerRound;
  const append = memory?.appendStepMs?.p50;
  verdicts.push({
    key: 'per-step',
    target: 'Per-step overhead ≤ 5 % over the raw loop in a worker',
    measured: `${results.perStep.airlockMsPerStep.p50.toFixed(1)} vs ${results.perStep.rawWorkerMsPerStep.p50.toFixed(1)} ms per step: ${pct(overhead)} (${extra.toFixed(1)} ms per step); within a round, ${pct(perRound.min)} to ${pct(perRound.max)}`,
    met: overhead <= 5,
    by: overhead <= 5 ? `${points(5 - overhead)} to spare` : points(overhead - 5),
    close:
      overhead <= 5
        ? ''
        : `Per step Airlock also writes the step to IndexedDB in one transaction${typeof append === 'number' ? ` (${append.toFixed(1)} ms p50 in the memory bench, against ${extra.toFixed(1)} ms extra per step here)` : ''} before the next model call, builds the context from the store, and calls the page tool over Comlink. Committing the step while the next model call starts would take the write off the critical path, at the cost of the guarantee that a step is stored before the next call; the paired difference is noisy on a loaded machine, so confirm on a quiet one first.`,
  });
  return verdicts;
}
