// Runs a self-driving bench page (sandbox, memory): the page measures itself and leaves
// its figures in `globalThis.benchResults`, or a message in `globalThis.benchError`. A page
// may call `benchWorkerThreads()` for the CPU time of the browser's worker threads, and
// `benchWorkerHeaps()` for their heaps.
import { chromiumWorkerThreads } from '../../test/setup/worker-threads.mjs';
import { workerHeaps } from './worker-heaps.mjs';

/**
 * Loads `name`'s page and waits for its figures.
 * @param {import('playwright').Browser} browser
 * @param {string} origin the preview server
 * @param {string} modelServerUrl the fake model server
 * @param {string} name
 * @param {Record<string, string>} [query] more query parameters for the page
 * @returns {Promise<unknown>}
 */
export async function runSelfMeasuringPage(browser, origin, modelServerUrl, name, query = {}) {
  // An https model server has a throwaway self-signed certificate (`scripts/self-signed-cert.mjs`).
  const page = await browser.newPage({ ignoreHTTPSErrors: modelServerUrl.startsWith('https:') });
  try {
    await page.exposeFunction('benchWorkerThreads', () => chromiumWorkerThreads(browser));
    await page.exposeFunction('benchWorkerHeaps', () => workerHeaps(browser));
    const search = new URLSearchParams({ model: modelServerUrl, ...query });
    await page.goto(`${origin}/${name}/index.html?${search}`);
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
