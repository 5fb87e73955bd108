// One section of BENCHMARKS.md, for the benches that run on their own command (the fault
// soak, the proxy load test) and keep their section when `npm run bench` rewrites the rest.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export const reportPath = new URL('../../BENCHMARKS.md', import.meta.url);

/**
 * The section under `heading` (a `## ` line) as `report` has it, up to the next `## `
 * heading, or undefined when it has none.
 * @param {string} report
 * @param {string} heading
 */
export function existingSection(report, heading) {
  const start = report.indexOf(`${heading}\n`);
  if (start < 0) return undefined;
  const next = report.indexOf('\n## ', start + heading.length);
  return report.slice(start, next < 0 ? undefined : next).trimEnd();
}

/**
 * The section under `heading` as BENCHMARKS.md has it now, if the file and the section exist.
 * @param {string} heading
 */
export function sectionInReport(heading) {
  return existsSync(reportPath)
    ? existingSection(readFileSync(reportPath, 'utf8'), heading)
    : undefined;
}

/**
 * Puts `section` (starting with its `heading`) into BENCHMARKS.md, in place of the old one
 * or at the end.
 * @param {string} heading
 * @param {string} section
 */
export function spliceSection(heading, section) {
  const report = existsSync(reportPath) ? readFileSync(reportPath, 'utf8') : '# Benchmarks\n';
  const old = existingSection(report, heading);
  const next = old ? report.replace(old, section) : `${report.trimEnd()}\n\n${section}\n`;
  writeFileSync(reportPath, next);
}
