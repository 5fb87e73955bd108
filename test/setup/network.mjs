// A browser command for tests (`commands.goOffline(ms)`): takes the test browser's network
// down for `ms`, as a train's tunnel does, then brings it back before it answers. Playwright's
// `BrowserContext.setOffline` fails every request of the page and its workers and makes
// `navigator.onLine` false; it also stalls the page's own line to vitest, so the command
// cannot be answered (nor another sent) until the network is back: hence one command that
// does both.

/**
 * Sets the browser offline for `ms`, then online again; false (and nothing done) where the
 * provider has no Playwright context to do it with.
 * @param {import('vitest/node').BrowserCommandContext} context
 * @param {number} ms
 * @returns {Promise<boolean>}
 */
export async function goOffline(context, ms) {
  const browserContext = context.context;
  if (typeof browserContext?.setOffline !== 'function') return false;
  await browserContext.setOffline(true);
  try {
    await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(0, ms), 60_000)));
  } finally {
    await browserContext.setOffline(false);
  }
  return true;
}
