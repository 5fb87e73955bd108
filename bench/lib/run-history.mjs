// Targets run after run: each `npm run bench` adds a page's verdicts to its history
// (bench/results/<page>-history.json), and the report shows the last three, so a target
// met once on a lucky run is told from one that holds.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { noVerdictReason } from './load-check.mjs';

/** How many runs a file keeps, and how many the report judges together. */
const KEPT = 10;
export const CONSECUTIVE = 3;

/** @typedef {{ key: string; target: string; measured: string; met: boolean }} RecordedVerdict */
/**
 * @typedef {{
 *   date: string;
 *   revision?: string;
 *   machine: { cores: number; loadAverage?: { start: number[]; end: number[] } };
 *   verdicts: RecordedVerdict[];
 * }} HistoryEntry
 */

/**
 * The commit the bench ran on, `-dirty` when `src/` or `bench/` (but its results) had changes
 * not committed; undefined outside a git checkout.
 */
export function benchedRevision() {
  try {
    const git = (/** @type {string[]} */ args) =>
      execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const head = git(['rev-parse', '--short', 'HEAD']);
    // The bench writes its own results: those are not a change to what ran.
    const changes = git(['status', '--porcelain', '--', 'src', 'bench', ':!bench/results']);
    return changes === '' ? head : `${head}-dirty`;
  } catch {
    return undefined;
  }
}

/**
 * Appends one run's verdicts to a history file (its targets judged, whatever the load: the
 * report withholds the verdicts of a busy run when it reads them back).
 * @param {string} path
 * @param {{ date: string; revision?: string | undefined; machine: HistoryEntry['machine'] }} run
 * @param {readonly RecordedVerdict[]} verdicts
 */
export function recordRun(path, run, verdicts) {
  const entry = {
    date: run.date,
    ...(run.revision ? { revision: run.revision } : {}),
    machine: { cores: run.machine.cores, loadAverage: run.machine.loadAverage },
    verdicts: verdicts.map(({ key, target, measured, met }) => ({ key, target, measured, met })),
  };
  const history = [...readHistory(path), entry].slice(-KEPT);
  writeFileSync(path, `${JSON.stringify(history, null, 2)}\n`);
}

/**
 * @param {string | URL} path
 * @returns {HistoryEntry[]}
 */
export function readHistory(path) {
  if (!existsSync(path)) return [];
  const parsed = JSON.parse(readFileSync(path, 'utf8'));
  return Array.isArray(parsed) ? parsed : [];
}

/**
 * Each target's verdict in each of the last runs, and whether it held in all of them. A run
 * on a busy machine gets no verdict, and then no target holds. With several pages (each its
 * own history), a row's cells are its own page's last runs, and the runs are listed under
 * the table.
 * @param {ReadonlyArray<{ page: string; history: readonly HistoryEntry[] }>} pages
 */
export function runAfterRunTable(pages) {
  const runLabel = (
    /** @type {readonly HistoryEntry[]} */ history,
    /** @type {HistoryEntry} */ entry,
  ) => {
    const load = entry.machine.loadAverage?.start[0];
    const on = entry.revision ? ` on ${entry.revision}` : '';
    return `run ${history.indexOf(entry) + 1}: ${entry.date.slice(0, 16).replace('T', ' ')}${on}, load ${load === undefined ? '?' : load.toFixed(1)}`;
  };
  const lasts = pages.map(({ page, history }) => ({
    page,
    history,
    last: history.slice(-CONSECUTIVE),
  }));
  const columns = Math.max(0, ...lasts.map(({ last }) => last.length));
  /** @type {string[][]} */
  const rows = [];
  for (const { last } of lasts) {
    const keys = [
      ...new Set(last.flatMap((entry) => entry.verdicts.map((verdict) => verdict.key))),
    ];
    const judged = last.map((entry) => !noVerdictReason(entry.machine));
    for (const key of keys) {
      const verdicts = last.map((entry) => entry.verdicts.find((verdict) => verdict.key === key));
      const cells = verdicts.map((verdict, index) =>
        verdict
          ? `${verdict.measured.replaceAll('|', '\\|')}: ${judged[index] ? (verdict.met ? '**met**' : '**missed**') : 'no verdict'}`
          : '–',
      );
      const holds =
        last.length === CONSECUTIVE &&
        verdicts.every((verdict, index) => verdict?.met && judged[index]);
      const target = verdicts.findLast((verdict) => verdict)?.target ?? key;
      rows.push([
        target,
        ...Array.from({ length: columns - cells.length }, () => '–'),
        ...cells,
        holds ? '**yes**' : 'no',
      ]);
    }
  }
  const only = lasts.length === 1 ? lasts[0] : undefined;
  const header = only
    ? only.last.map((entry) => runLabel(only.history, entry))
    : Array.from({ length: columns }, (_, index) =>
        columns - index === 1 ? 'last run' : `run −${columns - index - 1}`,
      );
  const line = (/** @type {string[]} */ cells) => `| ${cells.join(' | ')} |`;
  const table = [
    line(['target', ...header, `held in all ${CONSECUTIVE}`]),
    line(['---', ...header.map(() => '---'), '---']),
    ...rows.map(line),
  ].join('\n');
  if (only) return table;
  const runs = lasts.map(
    ({ page, history, last }) =>
      `- ${page}: ${last.length === 0 ? 'no runs recorded' : last.map((entry) => runLabel(history, entry)).join('; ')}`,
  );
  return `${table}\n\n${runs.join('\n')}`;
}
