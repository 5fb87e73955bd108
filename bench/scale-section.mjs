// The "Scale" section of BENCHMARKS.md, from bench/results/scale.json and the knowledge
// page's figures: each figure beside its target, with a verdict unless the machine was
// too busy when the run began.
import { noVerdictReason } from './lib/load-check.mjs';
import { CONSECUTIVE, runAfterRunTable } from './lib/run-history.mjs';
import { CPU_RATIO_BOUND, pairRatios } from './lib/scale-cpu-ratio.mjs';

/** @typedef {import('./lib/run-history.mjs').HistoryEntry} HistoryEntry */

/** @typedef {import('./lib/targets.mjs').Summary} Summary */
/**
 * @typedef {{
 *   machine?: { cores: number; loadAverage?: { start: number[]; end: number[] } };
 *   date: string;
 *   scale: {
 *     concurrentRuns: { runs: number; chunkDelayMs: number; wordsPerReply: number; loneRunMs: Summary; concurrentRunMs: Summary; ratioToLone: Summary; burstMs: number; longTasks: number; rounds?: number; addedRounds?: number; agentCpuMsPerRun?: number | null; cpuClock?: 'ns' | 'ticks'; agentCpuMsPerRunByRound?: number[] | null; rawLoop?: { loneRunMs: Summary; concurrentRunMs: Summary; cpuMsPerRun: number | null; cpuMsPerRunByRound?: number[] | null }; cpuRatioToRawLoop?: number | null; cpuRatioInterval?: { low: number; high: number } | null; storingLoop?: { concurrentRunMs: Summary; cpuMsPerRun: number | null; cpuMsPerRunByRound?: number[] | null }; cpuRatioToStoringLoop?: number | null };
 *     sandboxBurst: { calls: number; maxConcurrency: number; poolSize: number; failed: number; callsPerSecond: number; callMs: Summary; peakLiveWorkers: number; liveWorkersAfter: number; expectedLiveWorkersAfter: number; workersStarted: number };
 *     conversationList: { conversations: number; messages: number; pageSize: number; firstPageMs: Summary; nextPageMs: Summary; wholeListMs: Summary; search?: { name: string; query: string; found: number; ms: Summary }[] };
 *     workerHeap?: { startedBytes: number; firstRunBytes: number; conversations: number; warmBytes: number; afterBytes: number; perConversationBytes: number } | null;
 *   };
 * }} ScaleFile
 */
/**
 * @typedef {{
 *   machine?: { cores: number; loadAverage?: { start: number[]; end: number[] } };
 *   date: string;
 *   knowledge: { searchMs: Record<string, Summary>; firstAnswerMs50k: number; exactIndexMs50k: number };
 * }} KnowledgeFile
 */

export const SCALE_HEADING = '## Scale';

/** The heap an agent worker may use once it has run: five agents on a page stay under 40 MB. */
const MAX_AGENT_HEAP_BYTES = 8 * 1024 * 1024;
/** What each conversation an agent has run may add: 1,000 in one session stay under 4 MB. */
const MAX_CONVERSATION_HEAP_BYTES = 4 * 1024;

const mb = (/** @type {number} */ bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const kb = (/** @type {number} */ bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const ms = (/** @type {number} */ value) =>
  `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
const spread = (/** @type {Summary} */ summary, unit = ' ms') =>
  `${summary.p50}${unit} p50 (${summary.min}–${summary.max}, p95 ${summary.p95})`;

/**
 * @param {{ machine?: { cores: number; loadAverage?: { start: number[] } } } | undefined} file
 * @param {boolean} met
 */
function verdict(file, met) {
  const refused = noVerdictReason(file?.machine);
  if (refused) return `no verdict: ${refused}`;
  return met ? '**met**' : '**missed**';
}

/**
 * The per-burst figures behind a median, when there were several bursts, and the ratio of
 * each burst to the other contestant's right after it (the ratio judged is their median).
 * @param {number[] | null | undefined} airlock
 * @param {number[] | null | undefined} raw
 */
function byRound(airlock, raw) {
  if (!airlock || !raw || airlock.length < 2) return '';
  const list = (/** @type {number[]} */ values) =>
    values.map((value) => value.toFixed(2)).join(', ');
  return `; medians of ${airlock.length} alternating bursts each, after a burst to warm up (${list(airlock)} vs ${list(raw)}); the ratio is the median of the pairs' (${list(pairRatios(airlock, raw))})`;
}

/**
 * One row of the section: a target, what was measured, and whether it was met (`met` is
 * undefined for a figure reported without a target). Rows with a `key` are what a run's
 * history keeps, with their `brief` measure when they have one.
 * @typedef {{ key?: string; target: string; measured: string; brief?: string; met?: boolean; file: ScaleFile | KnowledgeFile | undefined }} ScaleRow
 */

/**
 * The scale page's rows from `scale`, and the knowledge page's from `knowledge`.
 * @param {ScaleFile | undefined} scale
 * @param {KnowledgeFile | undefined} knowledge
 * @returns {ScaleRow[]}
 */
export function scaleTargets(scale, knowledge) {
  /** @type {ScaleRow[]} */
  const rows = [];
  const figures = scale?.scale;
  if (figures) {
    const file = scale;
    const runs = figures.concurrentRuns;
    rows.push({
      key: 'concurrent-wall',
      target: `${runs.runs} runs at once on one agent, the server pacing every stream (${runs.chunkDelayMs} ms between chunks, ${runs.wordsPerReply} words, over HTTP/2): each run's wall time ≤ 1.5× a lone run's${runs.rounds && runs.rounds > 1 ? ` (${runs.rounds} bursts)` : ''}`,
      measured: `lone ${spread(runs.loneRunMs)}; at once ${spread(runs.concurrentRunMs)}; ratio ${spread(runs.ratioToLone, '×')}; the burst ${ms(runs.burstMs)}`,
      brief: `at most ${runs.ratioToLone.max}× (p50 ${runs.ratioToLone.p50}×)`,
      met: runs.ratioToLone.max <= 1.5,
      file,
    });
    const raw = runs.rawLoop;
    if (raw) {
      const cpu = runs.agentCpuMsPerRun;
      const rawCpu = raw.cpuMsPerRun;
      const ratio = runs.cpuRatioToRawLoop;
      const target = `The agent worker's CPU time per run in that burst ≤ ${CPU_RATIO_BOUND}× the hand-written loop's in a plain worker (the same ${runs.runs} runs at once)`;
      if (cpu != null && rawCpu != null && ratio != null) {
        const pairs = pairRatios(runs.agentCpuMsPerRunByRound, raw.cpuMsPerRunByRound);
        const interval = runs.cpuRatioInterval
          ? `; 95 % interval of the median ${runs.cpuRatioInterval.low}–${runs.cpuRatioInterval.high}`
          : '';
        const added = runs.addedRounds
          ? ` (${runs.addedRounds} bursts added, the interval after ${(runs.rounds ?? 0) - runs.addedRounds} holding the bound)`
          : '';
        rows.push({
          key: 'concurrent-cpu',
          target,
          measured: `${cpu.toFixed(1)} ms vs ${rawCpu.toFixed(1)} ms per run: ${ratio}×${interval}${added}${byRound(runs.agentCpuMsPerRunByRound, raw.cpuMsPerRunByRound)} (worker threads' CPU from /proc, ${runs.cpuClock === 'ns' ? "to the ns (the scheduler's run time)" : 'in 10 ms ticks'}, over each whole burst); the loop's runs took ${spread(raw.concurrentRunMs)}`,
          brief: `${ratio}× (${cpu.toFixed(1)} vs ${rawCpu.toFixed(1)} ms${interval}${pairs.length > 1 ? `; ${pairs.length} pairs ${Math.min(...pairs).toFixed(2)}–${Math.max(...pairs).toFixed(2)}` : ''})`,
          met: ratio <= CPU_RATIO_BOUND,
          file,
        });
      } else
        rows.push({ target, measured: 'not measured: no /proc to read worker threads from', file });
    }
    // The loop above stores nothing; this one keeps what a chat that remembers must (its
    // input and its answer, a transaction each): where the storage's own cost shows.
    const storing = runs.storingLoop;
    if (storing && runs.agentCpuMsPerRun != null && storing.cpuMsPerRun != null)
      rows.push({
        target: `For comparison (no target): the agent worker's CPU time per run against the same loop storing each run's input and answer in IndexedDB, a transaction each (its runs took ${spread(storing.concurrentRunMs)})`,
        measured: `${runs.agentCpuMsPerRun.toFixed(1)} ms vs ${storing.cpuMsPerRun.toFixed(1)} ms per run: ${runs.cpuRatioToStoringLoop}×${byRound(runs.agentCpuMsPerRunByRound, storing.cpuMsPerRunByRound)}`,
        file,
      });
    rows.push({
      key: 'concurrent-long-tasks',
      target: `No long task on the page while the ${runs.runs} runs go on`,
      measured: `${runs.longTasks} long task(s)`,
      met: runs.longTasks === 0,
      file,
    });
    const burst = figures.sandboxBurst;
    rows.push({
      key: 'sandbox-burst',
      target: `${burst.calls} sandboxed calls in flight across one toolset (\`maxConcurrency\` ${burst.maxConcurrency}, \`poolSize\` ${burst.poolSize}): throughput and p95 (no target), all succeed`,
      measured: `${burst.callsPerSecond} calls/s; call ${spread(burst.callMs)}; ${burst.failed} failed`,
      brief: `${burst.failed} failed`,
      met: burst.failed === 0,
      file,
    });
    rows.push({
      key: 'sandbox-shrink',
      target: `After the burst the toolset shrinks back: the policy worker, \`poolSize\` fresh workers and the one the conversation keeps (${burst.expectedLiveWorkersAfter})`,
      measured: `${burst.peakLiveWorkers} live at the peak, ${burst.liveWorkersAfter} after; ${burst.workersStarted} started in all`,
      brief: `${burst.liveWorkersAfter} live after`,
      met: burst.liveWorkersAfter === burst.expectedLiveWorkersAfter,
      file,
    });
    const list = figures.conversationList;
    const stored = `${list.conversations.toLocaleString('en-US')} conversations and ${list.messages.toLocaleString('en-US')} messages stored`;
    // Results written before the list was read by pages have no page figures.
    if (!list.firstPageMs)
      rows.push({
        target: `Conversation list with ${stored}: its first page ≤ 20 ms p50`,
        measured: 'not measured in this run',
        file,
      });
    else {
      rows.push({
        key: 'list-first-page',
        target: `Conversation list with ${stored}: its first page (${list.pageSize} conversations) ≤ 20 ms p50`,
        measured: spread(list.firstPageMs),
        brief: `${list.firstPageMs.p50} ms p50`,
        met: list.firstPageMs.p50 <= 20,
        file,
      });
      rows.push({
        key: 'list-next-page',
        target: `The page after it (\`after\` the first page's last conversation) ≤ 20 ms p50`,
        measured: spread(list.nextPageMs),
        brief: `${list.nextPageMs.p50} ms p50`,
        met: list.nextPageMs.p50 <= 20,
        file,
      });
      rows.push({
        target: `The whole list at once, all ${list.conversations.toLocaleString('en-US')} (no target: a list this long is read by pages)`,
        measured: spread(list.wholeListMs),
        file,
      });
    }
    const heap = figures.workerHeap;
    if (heap) {
      rows.push({
        key: 'agent-heap',
        target: `The agent worker's heap after its first run ≤ ${mb(MAX_AGENT_HEAP_BYTES)} (after a garbage collection, read over the DevTools protocol)`,
        measured: `${mb(heap.firstRunBytes)} (${mb(heap.startedBytes)} once started, before any run)`,
        brief: mb(heap.firstRunBytes),
        met: heap.firstRunBytes <= MAX_AGENT_HEAP_BYTES,
        file,
      });
      rows.push({
        key: 'conversation-heap',
        target: `What each further conversation leaves in the agent worker's heap ≤ ${kb(MAX_CONVERSATION_HEAP_BYTES)} (one turn in each of ${heap.conversations} new conversations, after ${heap.conversations} as a warm-up)`,
        measured: `${kb(heap.perConversationBytes)} per conversation (${mb(heap.warmBytes)} → ${mb(heap.afterBytes)})`,
        brief: kb(heap.perConversationBytes),
        met: heap.perConversationBytes <= MAX_CONVERSATION_HEAP_BYTES,
        file,
      });
    }
    const what = {
      rare: 'a word one conversation holds',
      topic: 'two words, one of them typed in part, in one message of half the conversations',
      common: 'a word in every answer',
    };
    for (const search of list.search ?? [])
      rows.push({
        key: `search-${search.name}`,
        target: `Conversation search at the same size, ${what[/** @type {keyof typeof what} */ (search.name)] ?? search.name} (\`${search.query}\`, ${search.found.toLocaleString('en-US')} found, the newest 20 read) ≤ 20 ms p50`,
        measured: spread(search.ms),
        brief: `${search.ms.p50} ms p50`,
        met: search.ms.p50 <= 20,
        file,
      });
    if (!list.search)
      rows.push({
        target: 'Conversation search at the same size ≤ 20 ms p50',
        measured: 'not measured in this run',
        file,
      });
  }
  const search = knowledge?.knowledge.searchMs['100k'];
  if (knowledge && search) {
    const file = knowledge;
    rows.push({
      key: 'knowledge-search',
      target: 'Knowledge search at 100,000 chunks (embed locally, scan, read k chunks) ≤ 15 ms p50',
      measured: spread(search),
      brief: `${search.p50} ms p50`,
      met: search.p50 <= 15,
      file,
    });
    const { firstAnswerMs50k: first, exactIndexMs50k: exact } = knowledge.knowledge;
    const target =
      "The knowledge index's cold load at 50,000 chunks: a new agent worker's first query answered (from the vectors' int8 copies) ≤ 500 ms";
    // Results written before the int8 copies have no such figure.
    rows.push(
      typeof first === 'number'
        ? {
            key: 'knowledge-cold-load',
            target,
            measured: `${ms(first)} (the floats read and the index exact after ${ms(exact)})`,
            brief: ms(first),
            met: first <= 500,
            file,
          }
        : { target, measured: 'not measured in this run', file },
    );
  }
  return rows;
}

/**
 * The rows a run's history keeps: the judged ones, each with its short measure.
 * @param {readonly ScaleRow[]} rows
 * @returns {import('./lib/run-history.mjs').RecordedVerdict[]}
 */
export function recordedVerdicts(rows) {
  return rows.flatMap(({ key, target, measured, brief, met }) =>
    key !== undefined && met !== undefined
      ? [{ key, target, measured: brief ?? measured, met }]
      : [],
  );
}

/**
 * The rows of a page's last recorded run, its short measures beside its verdicts.
 * @param {readonly HistoryEntry[]} history
 * @returns {ScaleRow[]}
 */
function recordedRows(history) {
  const last = history.at(-1);
  return (last?.verdicts ?? []).map(({ key, target, measured, met }) => ({
    key,
    target,
    measured,
    met,
    file: /** @type {ScaleFile} */ (/** @type {unknown} */ (last)),
  }));
}

/**
 * @param {ScaleFile | undefined} scale
 * @param {KnowledgeFile | undefined} knowledge
 * @param {{ scale: readonly HistoryEntry[]; knowledge: readonly HistoryEntry[] }} [histories]
 *   each page's recorded runs, for the run-after-run table
 */
export function scaleSection(scale, knowledge, histories = { scale: [], knowledge: [] }) {
  // A page this run left out shows its last recorded verdicts (its figures are not committed).
  const rows = [
    ...(scale ? scaleTargets(scale, undefined) : recordedRows(histories.scale)),
    ...(knowledge ? scaleTargets(undefined, knowledge) : recordedRows(histories.knowledge)),
  ];
  if (rows.length === 0)
    return `${SCALE_HEADING}\n\nNo figures yet: \`npm run bench -- scale knowledge\`.`;
  const loads = [
    ['scale', scale ?? histories.scale.at(-1), !scale],
    ['knowledge', knowledge ?? histories.knowledge.at(-1), !knowledge],
  ].flatMap(([name, file, recorded]) => {
    const machine = /** @type {ScaleFile | undefined} */ (file)?.machine;
    const load = machine?.loadAverage;
    return load
      ? [
          `${name} page ${/** @type {ScaleFile} */ (file).date.slice(0, 16)}: load ${load.start.map((value) => value.toFixed(1)).join(' / ')} at the start, ${load.end.map((value) => value.toFixed(1)).join(' / ')} at the end, ${machine.cores} cores${recorded ? ' (not in this run: its recorded verdicts, short measures)' : ''}`,
        ]
      : [];
  });
  const line = (/** @type {string[]} */ cells) => `| ${cells.join(' | ')} |`;
  return `${SCALE_HEADING}

\`npm run bench -- scale knowledge\`. A run whose load average at the start exceeds the
machine's cores is not judged; its figures are kept, but they measure the other work too.
The model server speaks HTTP/2 over TLS here, as hosted models do: over HTTP/1.1 Chromium
opens at most six connections to one host, and the other fourteen runs would wait in the
browser for a free one (the ratio then reads 2–4× whatever the agent does).
${loads.length > 0 ? `\n${loads.map((entry) => `- ${entry}`).join('\n')}\n` : ''}
${line(['target', 'measured', 'verdict'])}
${line(['---', '---', '---'])}
${rows
  .map(({ target, measured, met, file }) =>
    line([target, measured, met === undefined ? 'not judged' : verdict(file, met)]),
  )
  .join('\n')}${
  histories.scale.length + histories.knowledge.length > 0
    ? `

### Run after run

The targets above in each page's last ${CONSECUTIVE} recorded runs (\`bench/results/scale-history.json\`
and \`knowledge-history.json\`, newest last; a run whose load average at the start exceeded the
cores gets no verdict). A target holds when it is met in each of ${CONSECUTIVE} runs in a row.

${runAfterRunTable([
  { page: 'scale page', history: histories.scale },
  { page: 'knowledge page', history: histories.knowledge },
])}`
    : ''
}`;
}
