// Which test files `scripts/test.mjs` runs once more: those an engine crashed under. A crash
// ends the page, so every test after it in the file fails too; the file's second run counts
// instead (docs/contributing.md says when WebKitGTK's web process has done this).

import { WebProcessCrashed } from './browsers/webkit-session.mjs';

/** The name of the errors that mark an engine crash: their class's. */
export const ENGINE_CRASH = WebProcessCrashed.name;

/**
 * The files whose every failure is an engine crash, each with the project it ran in. A file
 * with any other failure is not run again: that failure stands, and so do the crashes.
 * @param {readonly import('./failure-reporter.mjs').Failure[]} failures
 * @returns {Array<{ file: string; project: string }>}
 */
export function filesToRerun(failures) {
  /** @type {Map<string, { file: string; project: string; crashedOnly: boolean }>} */
  const files = new Map();
  for (const failure of failures) {
    const key = `${failure.project}\n${failure.file}`;
    const entry = files.get(key) ?? {
      file: failure.file,
      project: failure.project,
      crashedOnly: true,
    };
    entry.crashedOnly &&= failure.errorName === ENGINE_CRASH;
    files.set(key, entry);
  }
  return [...files.values()]
    .filter((entry) => entry.crashedOnly)
    .map(({ file, project }) => ({ file, project }));
}
