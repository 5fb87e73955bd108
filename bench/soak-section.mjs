// The "Fault soak" section of BENCHMARKS.md, from bench/results/soak.json (written by
// `npm run soak`). `node bench/soak-section.mjs` puts it in BENCHMARKS.md in place of the
// section that is there, leaving every other section alone; `bench/report.mjs` keeps it.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spliceSection } from './lib/report-section.mjs';

export const SOAK_HEADING = '## Fault soak';
const resultsPath = new URL('./results/soak.json', import.meta.url);

/**
 * @typedef {{
 *   runs: number; finished: number; failed: number; aborted: number; seed: number;
 *   durationMs: number; at: string; workerTargetsMax: number; heapBytes: number[];
 *   faults: Record<string, number>; violations: { seed: number; what: string }[];
 * }} SoakFigures
 */

/** The section for `figures`. @param {SoakFigures} figures */
export function soakSection(figures) {
  const faults = Object.entries(figures.faults)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, times]) => `| ${kind} | ${times} |`)
    .join('\n');
  const heap = figures.heapBytes.map((bytes) => (bytes / 1024 / 1024).toFixed(1)).join(', ');
  return `${SOAK_HEADING}

\`npm run soak\` (${figures.at.slice(0, 10)}): **${figures.runs} runs** from seed ${figures.seed} in
${(figures.durationMs / 1000).toFixed(0)} s, real Chromium; each run draws its faults from its seed and the
invariants are checked after it (\`test/soak/soak.test.ts\`). **Violations: ${figures.violations.length}.**
Runs ${figures.finished} finished, ${figures.aborted} aborted, ${figures.failed} failed with an expected typed error.
Most dedicated workers the browser reported at once (CDP): ${figures.workerTargetsMax}. Page heap every
50 runs (MB): ${heap || 'not measured'}.

| fault injected | runs |
|---|---|
${faults}`;
}

/** Puts the section from soak.json into BENCHMARKS.md, replacing the old one or appending. */
function spliceIntoReport() {
  if (!existsSync(resultsPath)) throw new Error('No bench/results/soak.json: run `npm run soak`.');
  const section = soakSection(JSON.parse(readFileSync(resultsPath, 'utf8')));
  spliceSection(SOAK_HEADING, section);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) spliceIntoReport();
