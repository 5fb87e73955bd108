// The targets of the peers bench, run after run: each `npm run bench` adds its verdicts to
// bench/results/peers-history.json, and the report shows the last three, so a target met
// once on a lucky run is told from one that holds.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { noVerdictReason } from './load-check.mjs';
import { judgeTargets } from './targets.mjs';

/** How many runs the file keeps, and how many the report judges together. */
const KEPT = 10;
export const CONSECUTIVE = 3;

/**
 * @typedef {{
 *   date: string;
 *   machine: { cores: number; loadAverage?: { start: number[]; end: number[] } };
 *   verdicts: Array<{ key: string; target: string; measured: string; met: boolean }>;
 * }} HistoryEntry
 */

/**
 * Appends one peers run's verdicts to the history file.
 * @param {string} path
 * @param {import('./targets.mjs').PeersResults & { date: string; machine: HistoryEntry['machine'] }} results
 */
export function recordPeersRun(path, results) {
  const entry = {
    date: results.date,
    machine: { cores: results.machine.cores, loadAverage: results.machine.loadAverage },
    verdicts: judgeTargets(results, undefined).map(({ key, target, measured, met }) => ({
      key,
      target,
      measured,
      met,
    })),
  };
  const history = [...readPeersHistory(path), entry].slice(-KEPT);
  writeFileSync(path, `${JSON.stringify(history, null, 2)}\n`);
}

/**
 * @param {string | URL} path
 * @returns {HistoryEntry[]}
 */
export function readPeersHistory(path) {
  if (!existsSync(path)) return [];
  const parsed = JSON.parse(readFileSync(path, 'utf8'));
  return Array.isArray(parsed) ? parsed : [];
}

/**
 * The report's section on the last runs: each target's verdict in each, and whether it
 * held in all of them. A run on a busy machine gets no verdict, and then no target holds.
 * @param {HistoryEntry[]} history
 */
export function consecutiveRunsSection(history) {
  const last = history.slice(-CONSECUTIVE);
  const heading = '## Run after run';
  if (last.length === 0) return `${heading}\n\nNo runs recorded yet: \`npm run bench -- peers\`.`;
  const keys = [...new Set(last.flatMap((entry) => entry.verdicts.map((verdict) => verdict.key)))];
  const cell = (/** @type {HistoryEntry} */ entry, /** @type {string} */ key) => {
    const verdict = entry.verdicts.find((candidate) => candidate.key === key);
    if (!verdict) return '–';
    const refused = noVerdictReason(entry.machine);
    return `${verdict.measured.replaceAll('|', '\\|')}: ${refused ? 'no verdict' : verdict.met ? '**met**' : '**missed**'}`;
  };
  const holds = (/** @type {string} */ key) =>
    last.length === CONSECUTIVE &&
    last.every(
      (entry) =>
        !noVerdictReason(entry.machine) &&
        entry.verdicts.some((verdict) => verdict.key === key && verdict.met),
    );
  const rows = keys.map((key) => {
    const target =
      last.at(-1)?.verdicts.find((verdict) => verdict.key === key)?.target ??
      last.flatMap((entry) => entry.verdicts).find((verdict) => verdict.key === key)?.target ??
      key;
    return [target, ...last.map((entry) => cell(entry, key)), holds(key) ? '**yes**' : 'no'];
  });
  const runLabel = (/** @type {HistoryEntry} */ entry, /** @type {number} */ index) => {
    const load = entry.machine.loadAverage?.start[0];
    return `run ${history.length - last.length + index + 1}: ${entry.date.slice(0, 16).replace('T', ' ')}, load ${load === undefined ? '?' : load.toFixed(1)}`;
  };
  const line = (/** @type {string[]} */ cells) => `| ${cells.join(' | ')} |`;
  return `${heading}

The peers bench's targets in each of the last ${last.length} recorded runs (\`bench/results/peers-history.json\`,
newest last; a run whose load average at the start exceeded the cores gets no verdict). A
target holds when it is met in each of ${CONSECUTIVE} runs in a row.

${line(['target', ...last.map(runLabel), `held in all ${CONSECUTIVE}`])}
${line(['---', ...last.map(() => '---'), '---'])}
${rows.map(line).join('\n')}`;
}
