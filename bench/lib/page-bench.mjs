// Runs a self-driving bench page (sandbox, memory): the page measures itself and leaves
// its figures in `globalThis.benchResults`, or a message in `globalThis.benchError`.

/**
 * Loads `name`'s page and waits for its figures.
 * @param {import('playwright').Browser} browser
 * @param {string} origin the preview server
 * @param {string} modelServerUrl the fake model server
 * @param {string} name
 * @param {boolean} [smoke] asks the page for one pass of each measure
 * @returns {Promise<unknown>}
 */
export async function runSelfMeasuringPage(browser, origin, modelServerUrl, name, smoke = false) {
  const page = await browser.newPage();
  try {
    const query = `model=${encodeURIComponent(modelServerUrl)}${smoke ? '&smoke' : ''}`;
    await page.goto(`${origin}/${name}/index.html?${query}`);
    await page.waitForFunction(
      () => 'benchResults' in globalThis || 'benchError' in globalThis,
      null,
      { timeout: 1_200_000 },
    );
    const error = await page.evaluate(
      () => /** @type {{ benchError?: string }} */ (globalThis).benchError,
    );
    if (error) throw new Error(`The ${name} bench failed in the page: ${error}`);
    return await page.evaluate(
      () => /** @type {{ benchResults?: unknown }} */ (globalThis).benchResults,
    );
  } finally {
    await page.close();
  }
}
