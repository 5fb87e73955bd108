// A browser command for the soak (`commands.writeSoakReport(engine, json)`): puts one
// engine's figures into the file `AIRLOCK_SOAK_REPORT` names (`npm run soak` sets it), under
// `engines[engine]`, keeping the other engines' figures there; the smoke in `npm test`
// writes nothing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * @param {import('vitest/node').BrowserCommandContext} _context
 * @param {string} engine `chromium`, `firefox` or `webkit`
 * @param {string} report the engine's figures, as JSON text
 */
export async function writeSoakReport(_context, engine, report) {
  const path = process.env.AIRLOCK_SOAK_REPORT;
  if (!path) return;
  mkdirSync(dirname(path), { recursive: true });
  /** @type {{ engines: Record<string, unknown> }} */
  let all = { engines: {} };
  if (existsSync(path)) {
    const before = JSON.parse(readFileSync(path, 'utf8'));
    // A report of the one-engine soak (its figures at the top level) is replaced whole.
    if (before && typeof before === 'object' && before.engines) all = before;
  }
  all.engines[engine] = JSON.parse(report);
  writeFileSync(path, `${JSON.stringify(all, null, 2)}\n`);
}
