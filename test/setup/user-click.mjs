// A browser command for tests (`commands.clickAsUser(selector)`): clicks an element of the
// test's document as the user would, through the browser's automation, so that the click is a
// real user gesture (`navigator.userActivation`), which a popup blocker asks of `window.open`.
// A script's `element.click()` is not one: WebKit refuses a popup after it.

const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

/**
 * Clicks the first element matching `selector` in the test's frame as a user; false (and
 * nothing done) where the provider offers no way to (the test then says what it does instead).
 * @param {import('vitest/node').BrowserCommandContext & Record<string, any>} context
 * @param {string} selector
 * @returns {Promise<boolean>}
 */
export async function clickAsUser(context, selector) {
  if (typeof context.frame === 'function') {
    // Playwright: the test's frame, clicked through the input pipeline.
    await (await context.frame()).click(selector);
    return true;
  }
  const webdriver = context.webdriver;
  if (typeof webdriver !== 'function') return false;
  // WebKitGTK over WebDriver: Element Click is a trusted click, in the frame that holds it.
  const frames = /** @type {Record<string, string>[]} */ (
    await webdriver('POST', '/elements', { using: 'css selector', value: 'iframe' })
  );
  try {
    for (const frame of frames) {
      await webdriver('POST', '/frame', { id: frame });
      const found = /** @type {Record<string, string>[]} */ (
        await webdriver('POST', '/elements', { using: 'css selector', value: selector })
      );
      const element = found[0]?.[ELEMENT];
      if (element !== undefined) {
        await webdriver('POST', `/element/${element}/click`, {});
        return true;
      }
      await webdriver('POST', '/frame', { id: null });
    }
  } finally {
    await webdriver('POST', '/frame', { id: null });
  }
  throw new Error(`No element matches ${selector} in the test's frames.`);
}
