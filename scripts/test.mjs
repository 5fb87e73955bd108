// Runs every test: unit in Node, the browser suite in real Chromium, Firefox and WebKit,
// one engine after the other (two cores do not host three browsers at once), the e2e
// demo test, and the Quick start as a fresh app from the packed tarball (`example`, with
// Chromium's run). Ends with the plain total `N passed, N failed` over all of them.
// `AIRLOCK_BROWSERS=chromium,firefox` narrows the engines; arguments go to every vitest
// run (a file filter, say). Installs Debian's browsers and redis-server (the proxy's
// shared-store tests start their own) first when they are missing and this runs as root;
// otherwise says exactly what to install.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { relative } from 'node:path';

import { ensureBrowsers, selectedBrowsers } from './browsers.mjs';
import { filesToRerun } from './crash-reruns.mjs';
import { ensureRedis } from './redis.mjs';

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
if (!ensureBrowsers(browsers) || !ensureRedis()) {
  console.log('0 passed, 1 failed');
  process.exit(1);
}

/**
 * The fault soak's smoke (50 runs, about 30 to 45 s in each engine on the 2-core machine) and
 * the e2e demo test run in each engine, after that engine's browser suite; the example app's
 * acceptance test (npm pack, create, install, then its dev server in Chromium) with Chromium's.
 * @type {Partial<Record<string, string[]>>}
 */
const e2eProjects = {
  chromium: ['soak', 'e2e', 'example'],
  firefox: ['soak-firefox', 'e2e-firefox'],
  webkit: ['soak-webkit', 'e2e-webkit'],
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
// `unit-fetch-shell` runs the proxy's tests again through its Fetch-API shell (the edge runtimes' one).
if (runs[0]) runs[0].projects.unshift('unit', 'unit-fetch-shell');
else runs.push({ label: 'unit', projects: ['unit', 'unit-fetch-shell'] });

mkdirSync('test-results', { recursive: true });
const totals = { passed: 0, failed: 0, skipped: 0 };
/** @type {string[]} */
const summary = [];
/** Failed tests by name, listed just above the total: CI shows only the end of the output. */
/** @type {string[]} */
const failures = [];
/** Files run a second time after an engine crashed under them, listed with the totals. */
/** @type {string[]} */
const reruns = [];
for (const run of runs) {
  console.log(`\n── ${run.projects.join(' + ')} ──`);
  const first = runVitest(run.label, run.projects, process.argv.slice(2));
  const crashed = filesToRerun(first.failures);
  const counted = countResults(run.label, first, new Set(crashed.map(({ file }) => file)));
  for (const [index, { file, project }] of crashed.entries()) {
    const shown = relative(process.cwd(), file);
    console.log(
      `\nThe browser's page process crashed under ${shown} (${project}), an engine fault and not a failed assertion: running that file once more, and its second run counts.`,
    );
    reruns.push(`  ${shown} (${project}): its first run ended in a crash of the page process`);
    const again = runVitest(`${run.label}-rerun-${index + 1}`, [project], [shown]);
    for (const [group, counts] of countResults(run.label, again)) {
      const sum = counted.get(group) ?? { passed: 0, failed: 0, skipped: 0 };
      counted.set(group, {
        passed: sum.passed + counts.passed,
        failed: sum.failed + counts.failed,
        skipped: sum.skipped + counts.skipped,
      });
    }
  }
  const groups = [...counted].sort(([a], [b]) => suiteRank(a) - suiteRank(b));
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
if (reruns.length > 0) console.log(`Run twice:\n${reruns.join('\n')}`);
if (failures.length > 0) console.log(`Failed:\n${failures.join('\n')}`);
console.log(`${totals.passed} passed, ${totals.failed} failed`);
process.exit(totals.failed > 0 ? 1 : 0);

/**
 * One vitest run of `projects`, its JSON report and failures written under `label`.
 * @param {string} label
 * @param {readonly string[]} projects
 * @param {readonly string[]} args file filters and options for vitest
 * @returns {VitestRun}
 */
function runVitest(label, projects, args) {
  const report = `test-results/vitest-${label}.json`;
  const failuresFile = `test-results/failures-${label}.json`;
  rmSync(report, { force: true });
  rmSync(failuresFile, { force: true });
  const vitest = spawnSync(
    process.execPath,
    [
      'node_modules/vitest/vitest.mjs',
      'run',
      ...projects.flatMap((project) => ['--project', project]),
      // A file filter may leave one engine's run with nothing to do.
      '--passWithNoTests',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
      '--reporter=./scripts/failure-reporter.mjs',
      ...args,
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
      `vitest (${label}) did not finish: ${vitest.error?.message ?? `killed by ${vitest.signal}`}.`,
    );
  }
  return { report, failures: readFailures(failuresFile), exitCode: vitest.status ?? 1 };
}

/**
 * The failure reporter's messages (`scripts/failure-reporter.mjs`), none if it wrote no file.
 * @param {string} failuresFile
 * @returns {import('./failure-reporter.mjs').Failure[]}
 */
function readFailures(failuresFile) {
  return existsSync(failuresFile) ? JSON.parse(readFileSync(failuresFile, 'utf8')) : [];
}

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
 * @typedef {{
 *   report: string;
 *   failures: import('./failure-reporter.mjs').Failure[];
 *   exitCode: number;
 * }} VitestRun
 */

/**
 * Counts one run's JSON report per suite: unit, the soak smoke, e2e, the example app, and
 * the browser suite, under the engine's name. An error outside any test (a file that failed to load,
 * an unhandled error, a run that never finished) counts as a failure. The files of `rerun`
 * are left out: their second run counts instead.
 * @param {string} label the engine's run
 * @param {VitestRun} run
 * @param {ReadonlySet<string>} [rerun]
 * @returns {Map<string, { passed: number; failed: number; skipped: number }>}
 */
function countResults(label, { report, failures: reasons, exitCode }, rerun = new Set()) {
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
  for (const file of results.testResults) {
    if (rerun.has(file.name)) continue;
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
  // A run with files to run again exited non-zero for their failures, so an error outside
  // any test is not told from them here; their second run is checked as every run is.
  if (failed === 0 && rerun.size === 0 && exitCode !== 0) {
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
