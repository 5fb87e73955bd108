// Checks src/'s imports against the floor plan in .dependency-cruiser.cjs; `npm run lint` runs it.
// Through dependency-cruiser's API, not its CLI: the CLI refuses Node 20, which the package
// still supports and CI runs, while the API works there.
import { fileURLToPath } from 'node:url';
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * Cruises `src/` under `baseDir` (the repository by default) with the repository's rules.
 * @param {{ baseDir?: string }} [options]
 * @returns {Promise<{ exitCode: number, report: string, violations: { rule: string, from: string, to: string }[] }>}
 */
export async function checkImports({ baseDir = repoRoot } = {}) {
  const options = await extractDepcruiseOptions(`${repoRoot}.dependency-cruiser.cjs`);
  const result = await cruise(['src'], { ...options, baseDir });
  if (typeof result.output === 'string') throw new Error('dependency-cruiser returned text');
  const violations = result.output.summary.violations.map((violation) => ({
    rule: violation.rule.name,
    from: violation.from,
    to: violation.cycle ? violation.cycle.map((step) => step.name).join(' → ') : violation.to,
  }));
  // The exit code comes from the reporter: the `err` one counts the errors.
  const { output: report, exitCode } = await format(result.output, { outputType: 'err' });
  return { exitCode, report: String(report), violations };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { exitCode, report } = await checkImports();
  process.stdout.write(report);
  process.exitCode = exitCode;
}
