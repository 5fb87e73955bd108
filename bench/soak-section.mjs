// The "Fault soak" section of BENCHMARKS.md, from bench/results/soak.json (written by
// `npm run soak`, one entry per engine). `node bench/soak-section.mjs` puts it in
// BENCHMARKS.md in place of the section that is there, leaving every other section alone;
// `bench/report.mjs` keeps it.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spliceSection } from './lib/report-section.mjs';

export const SOAK_HEADING = '## Fault soak';
const resultsPath = new URL('./results/soak.json', import.meta.url);
const ENGINES = ['chromium', 'firefox', 'webkit'];

/**
 * One engine's figures.
 * @typedef {{
 *   runs: number; finished: number; failed: number; aborted: number; closed: number;
 *   resumed: number; effectCalls: number; effectExecutions: number;
 *   effectCallsInterrupted: number; seed: number; durationMs: number; at: string;
 *   workerTargetsMax: number | null; heapBytes: number[];
 *   faults: Record<string, number>; violations: { seed: number; what: string }[];
 * }} EngineFigures
 */
/** @typedef {{ engines: Record<string, EngineFigures> }} SoakFigures */

/** The section for `figures`. @param {SoakFigures} figures */
export function soakSection(figures) {
  const engines = ENGINES.filter((engine) => figures.engines?.[engine]);
  const of = (/** @type {string} */ engine) =>
    /** @type {EngineFigures} */ (figures.engines[engine]);
  const row = (
    /** @type {string} */ label,
    /** @type {(f: EngineFigures) => string | number} */ value,
  ) => `| ${label} | ${engines.map((engine) => value(of(engine))).join(' | ')} |`;
  const kinds = [...new Set(engines.flatMap((engine) => Object.keys(of(engine).faults)))].sort();
  const heap = engines
    .filter((engine) => of(engine).heapBytes.length > 0)
    .map(
      (engine) =>
        `${engine}: ${of(engine)
          .heapBytes.map((bytes) => (bytes / 1024 / 1024).toFixed(1))
          .join(', ')}`,
    );
  const violations = engines.flatMap((engine) =>
    of(engine).violations.map(({ seed, what }) => `- ${engine}, seed ${seed}: ${what}`),
  );
  return `${SOAK_HEADING}

\`npm run soak\`: each engine runs its seeded runs in one page (\`test/soak/soak.test.ts\`), each run
drawing its faults from its seed, and the invariants are checked after every run: each side-effect
tool call executed at most once, as a server outside the browser counted it (across crashes, closed
tabs, reloads and resumes); each executed call has its result or its \`tool-interrupted\` marker in
the audit log; one terminal event, of an expected typed error if any; no run left \`running\` once a
new agent is ready; a refused input never sent again; every stored tool call paired with its result.
"Runs ended" counts the runs and the resumes a new agent made of interrupted ones.

| | ${engines.join(' | ')} |
|---|${engines.map(() => '---').join('|')}|
${row('date', (f) => f.at.slice(0, 10))}
${row('runs (from seed)', (f) => `**${f.runs}** (${f.seed})`)}
${row('time', (f) => `${(f.durationMs / 1000).toFixed(0)} s`)}
${row('**violations**', (f) => `**${f.violations.length}**`)}
${row('runs ended: finished / aborted / failed with an expected typed error', (f) => `${f.finished} / ${f.aborted} / ${f.failed}`)}
${row('runs whose tab closed under them', (f) => f.closed)}
${row('interrupted runs resumed by a new agent', (f) => f.resumed)}
${row('side-effect calls executed (executions)', (f) => `${f.effectCalls} (${f.effectExecutions})`)}
${row('of which cut mid-call and marked `tool-interrupted`', (f) => f.effectCallsInterrupted)}
${row('most dedicated workers at once (CDP)', (f) => f.workerTargetsMax ?? 'n/a')}

| fault injected (runs) | ${engines.join(' | ')} |
|---|${engines.map(() => '---').join('|')}|
${kinds.map((kind) => row(kind, (f) => f.faults[kind] ?? 0)).join('\n')}

Page heap every 50 runs (MB; Chromium alone reports it): ${heap.join('; ') || 'not measured'}.${
    violations.length > 0 ? `\n\nViolations:\n\n${violations.join('\n')}` : ''
  }`;
}

/** Puts the section from soak.json into BENCHMARKS.md, replacing the old one or appending. */
function spliceIntoReport() {
  if (!existsSync(resultsPath)) throw new Error('No bench/results/soak.json: run `npm run soak`.');
  const section = soakSection(JSON.parse(readFileSync(resultsPath, 'utf8')));
  spliceSection(SOAK_HEADING, section);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) spliceIntoReport();
