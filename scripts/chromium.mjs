import { chromiumArgs, chromiumPath, ensureBrowsers } from './browsers.mjs';

// Chromium alone, for the callers that drive it through Playwright (the e2e test, the
// bench); `browsers.mjs` knows every engine.

export { chromiumArgs, chromiumPath };

/**
 * Makes sure the Chromium binary exists, installing Debian's package as root if needed.
 * @returns {boolean} whether the browser is there
 */
export function ensureChromium() {
  return ensureBrowsers(['chromium']);
}

/** `node scripts/chromium.mjs`: installs the browser if needed; exits non-zero if it cannot. */
if (import.meta.url === `file://${process.argv[1]}`) process.exit(ensureChromium() ? 0 : 1);
