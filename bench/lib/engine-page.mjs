// Runs a self-measuring bench page (see page-bench.mjs) in Firefox or WebKit, for the
// figures side by side with Chromium's. Firefox goes through puppeteer-core over WebDriver
// BiDi, WebKit through WebKitWebDriver: Playwright drives neither engine's Debian build.

import { WebkitSession } from '../../scripts/browsers/webkit-session.mjs';
import { firefoxPath, webkitOptions } from '../../scripts/browsers.mjs';

const PAGE_TIMEOUT_MS = 1_200_000;

/**
 * Loads `url` in `engine`, waits for the page's figures and returns them with the
 * browser's version.
 * @param {'firefox' | 'webkit'} engine
 * @param {string} url
 * @returns {Promise<{ version: string; figures: unknown }>}
 */
export function runPageIn(engine, url) {
  return engine === 'firefox' ? runInFirefox(url) : runInWebkit(url);
}

/** @param {string} url */
async function runInFirefox(url) {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: firefoxPath,
    headless: true,
    protocolTimeout: 0,
  });
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForFunction(() => 'benchResults' in globalThis || 'benchError' in globalThis, {
      timeout: PAGE_TIMEOUT_MS,
      polling: 200,
    });
    const { results, error } = await page.evaluate(() => {
      const scope = /** @type {{ benchResults?: unknown; benchError?: string }} */ (globalThis);
      return { results: scope.benchResults, error: scope.benchError };
    });
    if (error) throw new Error(`The bench failed in Firefox: ${error}`);
    // puppeteer says `firefox/153.8.0`.
    return { version: (await browser.version()).replace(/^firefox\//, ''), figures: results };
  } finally {
    await browser.close();
  }
}

/** @param {string} url */
async function runInWebkit(url) {
  const session = await WebkitSession.start(webkitOptions);
  try {
    await session.navigate(url);
    const deadline = Date.now() + PAGE_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const state = /** @type {{ results?: unknown; error?: string } | null} */ (
        await session.execute(
          'return "benchResults" in globalThis || "benchError" in globalThis ? { results: globalThis.benchResults, error: globalThis.benchError } : null;',
        )
      );
      if (state?.error) throw new Error(`The bench failed in WebKit: ${state.error}`);
      if (state) {
        return { version: `${session.browserVersion} (WebKitGTK)`, figures: state.results };
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error('The bench page gave no figures in WebKit in time.');
  } finally {
    await session.close();
  }
}
