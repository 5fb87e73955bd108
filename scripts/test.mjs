// Runs every test (unit in Node, browser in real headless Chromium) and ends with the
// plain total `N passed, N failed`. Installs Debian's Chromium first when it is missing
// and this runs as root; otherwise says exactly what to install.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';

import { ensureChromium } from './chromium.mjs';

const report = 'test-results/vitest.json';

if (!ensureChromium()) {
  console.log('0 passed, 1 failed');
  process.exit(1);
}
mkdirSync('test-results', { recursive: true });
const vitest = spawnSync(
  'npx',
  [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...process.argv.slice(2),
  ],
  { stdio: 'inherit' },
);
const { passed, failed } = countResults(vitest.status ?? 1);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || vitest.status !== 0 ? 1 : 0);

/**
 * Reads the JSON report; an error outside any test (a file that failed to load) counts as a failure.
 * @param {number} exitCode
 */
function countResults(exitCode) {
  if (!existsSync(report)) return { passed: 0, failed: 1 };
  const results = JSON.parse(readFileSync(report, 'utf8'));
  const passed = results.numPassedTests;
  let failed = results.numFailedTests;
  if (failed === 0 && exitCode !== 0) {
    console.log(
      'vitest failed outside any single test (a suite did not load, or an unhandled error).',
    );
    failed = Math.max(1, results.numFailedTestSuites);
  }
  return { passed, failed };
}
