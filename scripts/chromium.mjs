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
