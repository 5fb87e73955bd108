// Runs every test: unit in Node, the browser suite in real Chromium, Firefox and WebKit,
// one engine after the other (two cores do not host three browsers at once), the e2e
// demo test, and the Quick start as a fresh app from the packed tarball (`example`, with
// Chromium's run). Ends with the plain total `N passed, N failed` over all of them.
// `AIRLOCK_BROWSERS=chromium,firefox` narrows the engines; arguments go to every vitest
// run (a file filter, say). Installs Debian's browsers first when they are missing and
// this runs as root; otherwise says exactly what to install.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

import { ensureBrowsers, selectedBrowsers } from './browsers.mjs';

/** One engine's run must not take the whole CI budget if a browser hangs. */
const RUN_TIMEOUT_MS = Number(process.env.AIRLOCK_TEST_RUN_TIMEOUT_MS ?? 30 * 60_000);

/** @type {ReturnType<typeof selectedBrowsers>} */
let browsers;
try {
  browsers = selectedBrowsers();
} catch (error) {
  console.log(error instanceof Error ? error.message : String(error));
  console.log('0 passed, 1 failed');
  process.exit(1);
}
if (!ensureBrowsers(browsers)) {
  console.log('0 passed, 1 failed');
  process.exit(1);
}

/**
 * The e2e demo test runs in each engine, after that engine's browser suite; the fault
 * soak's smoke (50 runs; it reads workers through CDP) and the example app's acceptance
 * test (npm pack, create, install, then its dev server in Chromium) with Chromium's.
 * @type {Partial<Record<string, string[]>>}
 */
const e2eProjects = {
  chromium: ['soak', 'e2e', 'example'],
  firefox: ['e2e-firefox'],
  webkit: ['e2e-webkit'],
};

/**
 * The vitest runs, in order, one per engine; unit tests go with the first.
 * @type {Array<{ label: string; projects: string[] }>}
 */
const runs = [];
for (const browser of browsers) {
  runs.push({
    label: browser,
    projects: [browser, ...(e2eProjects[browser] ?? [])],
  });
}
if (runs[0]) runs[0].projects.unshift('unit');
else runs.push({ label: 'unit', projects: ['unit'] });

mkdirSync('test-results', { recursive: true });
const totals = { passed: 0, failed: 0, skipped: 0 };
/** @type {string[]} */
const summary = [];
/** Failed tests by name, listed just above the total: CI shows only the end of the output. */
/** @type {string[]} */
const failures = [];
for (const run of runs) {
  const report = `test-results/vitest-${run.label}.json`;
  const failuresFile = `test-results/failures-${run.label}.json`;
  rmSync(report, { force: true });
  rmSync(failuresFile, { force: true });
  console.log(`\n── ${run.projects.join(' + ')} ──`);
  const vitest = spawnSync(
    process.execPath,
    [
      'node_modules/vitest/vitest.mjs',
      'run',
      ...run.projects.flatMap((project) => ['--project', project]),
      // A file filter may leave one engine's run with nothing to do.
      '--passWithNoTests',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
      '--reporter=./scripts/failure-reporter.mjs',
      ...process.argv.slice(2),
    ],
    {
      stdio: 'inherit',
      timeout: RUN_TIMEOUT_MS,
      killSignal: 'SIGTERM',
      env: { ...process.env, AIRLOCK_FAILURES_FILE: failuresFile },
    },
  );
  if (vitest.error || vitest.signal) {
    console.log(
      `vitest (${run.label}) did not finish: ${vitest.error?.message ?? `killed by ${vitest.signal}`}.`,
    );
  }
  const groups = [...countResults(report, failuresFile, vitest.status ?? 1)].sort(
    ([a], [b]) => suiteRank(a) - suiteRank(b),
  );
  for (const [group, counts] of groups) {
    totals.passed += counts.passed;
    totals.failed += counts.failed;
    totals.skipped += counts.skipped;
    summary.push(
      `  ${group.padEnd(24)} ${String(counts.passed).padStart(4)} passed ${String(counts.failed).padStart(3)} failed ${String(counts.skipped).padStart(3)} skipped`,
    );
  }
}
console.log(`\nPer suite (reports in test-results/vitest-*.json):\n${summary.join('\n')}`);
if (failures.length > 0) console.log(`Failed:\n${failures.join('\n')}`);
console.log(`${totals.passed} passed, ${totals.failed} failed`);
process.exit(totals.failed > 0 ? 1 : 0);

/**
 * Unit tests first, then the browser suite, the soak smoke, e2e and the example app, as they run.
 * @param {string} group
 */
function suiteRank(group) {
  return (
    ['unit', 'browser', 'soak', 'e2e', 'example'].findIndex((prefix) => group.startsWith(prefix)) +
    1
  );
}

/**
 * Counts one run's JSON report per suite: unit, the soak smoke, e2e, the example app, and
 * the browser suite, under the engine's name. An error outside any test (a file that failed to load,
 * an unhandled error, a run that never finished) counts as a failure.
 * @param {string} report
 * @param {string} failuresFile the failure reporter's messages (`scripts/failure-reporter.mjs`)
 * @param {number} exitCode
 * @returns {Map<string, { passed: number; failed: number; skipped: number }>}
 */
function countResults(report, failuresFile, exitCode) {
  const label = report.replace(/^.*vitest-(.*)\.json$/, '$1');
  /** @type {Map<string, { passed: number; failed: number; skipped: number }>} */
  const groups = new Map();
  if (!existsSync(report)) {
    groups.set(`${label} (no report)`, { passed: 0, failed: 1, skipped: 0 });
    return groups;
  }
  const results =
    /** @type {{ numFailedTestSuites: number; testResults: Array<{ name: string; assertionResults: Array<{ status: string; fullName: string }> }> }} */ (
      JSON.parse(readFileSync(report, 'utf8'))
    );
  const reasons = existsSync(failuresFile)
    ? /** @type {import('./failure-reporter.mjs').Failure[]} */ (
        JSON.parse(readFileSync(failuresFile, 'utf8'))
      )
    : [];
  for (const file of results.testResults) {
    const group = /\/test\/browser\//.test(file.name)
      ? `browser suite, ${label}`
      : /\/test\/e2e\//.test(file.name)
        ? `e2e, ${label}`
        : /\/test\/example\//.test(file.name)
          ? `example, ${label}`
          : /\/test\/soak\//.test(file.name)
            ? `soak smoke, ${label}`
            : 'unit';
    const counts = groups.get(group) ?? { passed: 0, failed: 0, skipped: 0 };
    for (const test of file.assertionResults) {
      if (test.status === 'passed') counts.passed += 1;
      else if (test.status === 'failed') {
        counts.failed += 1;
        const failure = reasons.find(
          (candidate) => candidate.file === file.name && candidate.name === test.fullName,
        );
        const reason = failure
          ? `${failure.message}${failure.at ? ` (${failure.at})` : ''}`
          : 'no message recorded';
        failures.push(
          `  ${label} · ${file.name.replace(/^.*?\/test\//, 'test/')} · ${test.fullName}\n      ${reason}`,
        );
      } else counts.skipped += 1;
    }
    groups.set(group, counts);
  }
  const failed = [...groups.values()].reduce((sum, counts) => sum + counts.failed, 0);
  if (failed === 0 && exitCode !== 0) {
    console.log(
      `vitest (${label}) failed outside any single test (a suite did not load, an unhandled error, or a hang).`,
    );
    groups.set(`${label} (outside tests)`, {
      passed: 0,
      failed: Math.max(1, results.numFailedTestSuites),
      skipped: 0,
    });
  }
  return groups;
}
