// A vitest reporter for `scripts/test.mjs`: writes each failed test's message and the line of
// its test file that failed to the JSON file named by AIRLOCK_FAILURES_FILE. The JSON reporter
// keeps only an error's stack, and Firefox's and WebKit's stacks leave out the message.

import { writeFileSync } from 'node:fs';

/**
 * @typedef {{
 *   file: string;
 *   project: string;
 *   name: string;
 *   errorName: string | undefined;
 *   message: string;
 *   at: string | undefined;
 * }} Failure
 */

export default class FailureReporter {
  /** @type {Failure[]} */
  failures = [];

  /** @param {import('vitest/node').TestCase} testCase */
  onTestCaseResult(testCase) {
    const result = testCase.result();
    if (result.state !== 'failed') return;
    const file = testCase.module.moduleId;
    const [error] = result.errors ?? [];
    const fileName = file.slice(file.lastIndexOf('/') + 1);
    // The JSON report's name: the titles of the enclosing suites and the test's, spaced.
    const titles = [testCase.name];
    for (let parent = testCase.parent; parent.type === 'suite'; parent = parent.parent) {
      titles.unshift(parent.name);
    }
    this.failures.push({
      file,
      project: testCase.project.name,
      name: titles.join(' '),
      // `WebProcessCrashed` (scripts/browsers/webkit-session.mjs) marks an engine crash.
      errorName: error?.name,
      message: (error?.message ?? 'failed without an error').split('\n')[0]?.slice(0, 300) ?? '',
      // The first stack frame in the test file itself: which assertion it was.
      at: (error?.stack ?? '')
        .split('\n')
        .find((line) => line.includes(fileName))
        ?.replace(/^.*?([^/?]+)(?:\?[^:]*)?:(\d+):\d+\)?$/, '$1:$2'),
    });
  }

  onTestRunEnd() {
    const path = process.env.AIRLOCK_FAILURES_FILE;
    if (path) writeFileSync(path, JSON.stringify(this.failures, null, 2));
  }
}
