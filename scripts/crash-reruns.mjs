// Which test files `scripts/test.mjs` runs once more: those an engine crashed under. WebKitGTK's
// web process has crashed (MiniBrowser: "WebProcess CRASHED") on a reload of the demo in two
// CI runs and in none of the runs here; a crash ends the page, so every test after it in the
// file fails too. Such a file is run again, once, and its second run's results count.

/** The error name that marks an engine crash (`scripts/browsers/webkit-session.mjs`). */
export const ENGINE_CRASH = 'WebProcessCrashed';

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
