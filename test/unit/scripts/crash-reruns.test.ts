import { describe, expect, it } from 'vitest';
import { ENGINE_CRASH, filesToRerun } from '../../../scripts/crash-reruns.mjs';
import type { Failure } from '../../../scripts/failure-reporter.mjs';

const failure = (file: string, errorName: string | undefined, project = 'e2e-webkit'): Failure => ({
  file: `/repo/test/e2e/${file}`,
  project,
  name: `a test of ${file}`,
  errorName,
  message: 'failed',
  at: undefined,
});

describe('the files npm test runs again', () => {
  it('runs a file again when every one of its failures is a crash of the page process', () => {
    expect(
      filesToRerun([
        failure('demo.e2e.test.ts', ENGINE_CRASH),
        failure('demo.e2e.test.ts', ENGINE_CRASH),
      ]),
    ).toEqual([{ file: '/repo/test/e2e/demo.e2e.test.ts', project: 'e2e-webkit' }]);
  });

  it('does not run a file again when any of its failures is not a crash: that failure stands', () => {
    expect(
      filesToRerun([
        failure('demo.e2e.test.ts', 'AssertionError'),
        failure('demo.e2e.test.ts', ENGINE_CRASH),
      ]),
    ).toEqual([]);
    expect(filesToRerun([failure('demo.e2e.test.ts', undefined)])).toEqual([]);
  });

  it('judges each file of each project apart', () => {
    expect(
      filesToRerun([
        failure('demo.e2e.test.ts', ENGINE_CRASH),
        failure('tabs.e2e.test.ts', 'Error'),
        failure('demo.e2e.test.ts', 'Error', 'e2e-firefox'),
      ]),
    ).toEqual([{ file: '/repo/test/e2e/demo.e2e.test.ts', project: 'e2e-webkit' }]);
  });

  it('runs nothing again when nothing failed', () => {
    expect(filesToRerun([])).toEqual([]);
  });
});
