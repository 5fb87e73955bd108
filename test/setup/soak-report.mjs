// A browser command for the soak (`commands.writeSoakReport(json)`): writes the figures to
// the file `AIRLOCK_SOAK_REPORT` names (`npm run soak` sets it); the smoke in `npm test`
// writes nothing.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * @param {import('vitest/node').BrowserCommandContext} _context
 * @param {string} report the figures, as JSON text
 */
export async function writeSoakReport(_context, report) {
  const path = process.env.AIRLOCK_SOAK_REPORT;
  if (!path) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${report}\n`);
}
