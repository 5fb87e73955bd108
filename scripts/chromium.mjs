import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// The browser every test and bench drives: Debian's Chromium by default (Playwright
// cannot download its own browsers here), or the binary AIRLOCK_CHROMIUM names.

/** Path of the Chromium binary. */
export const chromiumPath = process.env.AIRLOCK_CHROMIUM ?? '/usr/bin/chromium';

/** Flags for a headless Chromium running as root on a machine with no outside network. */
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Makes sure the Chromium binary exists: when it is missing and this runs as root on
 * Debian, installs Debian's package; otherwise says exactly what to install.
 * @returns {boolean} whether the browser is there
 */
export function ensureChromium() {
  if (existsSync(chromiumPath)) return true;
  const isRoot = process.getuid?.() === 0;
  if (!process.env.AIRLOCK_CHROMIUM && isRoot && existsSync('/usr/bin/apt-get')) {
    console.log(`Chromium is not at ${chromiumPath}; installing Debian's chromium package.`);
    for (const args of [
      ['update', '-qq'],
      ['install', '-y', '-qq', 'chromium'],
    ]) {
      const apt = spawnSync('apt-get', args, {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
      if (apt.status !== 0) {
        console.log(`apt-get ${args.join(' ')} failed (exit ${apt.status}).`);
        return false;
      }
    }
    if (existsSync(chromiumPath)) return true;
  }
  console.log(
    `No Chromium at ${chromiumPath}. Install it with \`sudo apt-get update && sudo apt-get install -y chromium\`, ` +
      'or point AIRLOCK_CHROMIUM at a Chromium or Chrome binary.',
  );
  return false;
}

/** `node scripts/chromium.mjs`: installs the browser if needed; exits non-zero if it cannot. */
if (import.meta.url === `file://${process.argv[1]}`) process.exit(ensureChromium() ? 0 : 1);
