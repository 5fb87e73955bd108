// A browser command for the soak (`commands.workerTargets()`): how many dedicated workers
// the browser itself reports, through CDP, so a leaked tool worker shows whatever the
// page's own bookkeeping says.

/**
 * The number of dedicated worker targets in the test browser; `null` without CDP.
 * @param {import('vitest/node').BrowserCommandContext} context
 * @returns {Promise<number | null>}
 */
export async function workerTargets({ context }) {
  // Only Playwright's Chromium has a browser CDP session; Firefox and WebKit providers give none.
  const browser = typeof context?.browser === 'function' ? context.browser() : null;
  if (!browser || typeof browser.newBrowserCDPSession !== 'function') return null;
  const session = await browser.newBrowserCDPSession();
  try {
    const { targetInfos } = /** @type {{ targetInfos: Array<{ type: string }> }} */ (
      await session.send('Target.getTargets')
    );
    return targetInfos.filter((target) => target.type === 'worker').length;
  } finally {
    await session.detach();
  }
}
