// A vitest browser provider for stock Firefox (Debian's firefox-esr) over WebDriver BiDi
// with puppeteer-core. Playwright drives only its own patched Firefox (`-juggler-pipe`),
// which cannot be downloaded here, and its BiDi channel fails on stock Firefox.
// Without Playwright there is no `userEvent` and no screenshots: the suite uses neither.
import { defineBrowserProvider } from '@vitest/browser';
import { firefoxLaunchOptions } from '../browsers.mjs';

/**
 * @typedef {{
 *   readonly executablePath: string;
 *   readonly args?: readonly string[];
 *   readonly prefs?: Readonly<Record<string, unknown>>;
 * }} FirefoxProviderOptions
 */

/**
 * The provider option for a project's `browser.provider`.
 * @param {FirefoxProviderOptions} options
 */
export function puppeteerFirefox(options) {
  return defineBrowserProvider({
    name: 'puppeteer-firefox',
    supportedBrowser: ['firefox'],
    options,
    providerFactory: (project) => new FirefoxProvider(project, options),
  });
}

/** @typedef {import('vitest/node').BrowserProvider} BrowserProvider */

/** @implements {BrowserProvider} */
class FirefoxProvider {
  name = 'puppeteer-firefox';
  // One tester page at a time: vitest then runs the files one after the other.
  supportsParallelism = false;
  /** @type {Promise<import('puppeteer-core').Browser> | undefined} */
  browser;
  /** @type {Map<string, import('puppeteer-core').Page>} */
  pages = new Map();
  closing = false;

  /**
   * @param {import('vitest/node').TestProject} project
   * @param {FirefoxProviderOptions} options
   */
  constructor(project, options) {
    this.project = project;
    this.options = options;
  }

  /** Launched on first use, once; a failed launch is retried by the next page. */
  openBrowser() {
    this.browser ??= import('puppeteer-core').then(({ default: puppeteer }) =>
      puppeteer.launch({
        browser: 'firefox',
        executablePath: this.options.executablePath,
        headless: this.project.config.browser.headless,
        args: [...(this.options.args ?? [])],
        ...firefoxLaunchOptions,
        extraPrefsFirefox: { ...firefoxLaunchOptions.extraPrefsFirefox, ...this.options.prefs },
        // Vitest's own timeouts bound a test; a slow protocol reply under load is no failure.
        protocolTimeout: 0,
      }),
    );
    this.browser.catch(() => {
      this.browser = undefined;
    });
    return this.browser;
  }

  /**
   * What browser commands get besides vitest's own context: the browser's process, whose
   * tree `test/setup/worker-threads.mjs` reads.
   * @param {string} _sessionId
   */
  getCommandsContext(_sessionId) {
    return {
      browserProcess: {
        pid: () => this.browserPid,
        // Firefox names every dedicated worker's thread so, in its `Web Content` processes.
        workerThreadName: 'DOM Worker',
      },
    };
  }

  /** @type {number | undefined} */
  browserPid;

  /**
   * @param {string} sessionId
   * @param {string} url
   */
  async openPage(sessionId, url) {
    this.throwIfClosing();
    const browser = await this.openBrowser();
    this.browserPid = browser.process()?.pid;
    await this.pages.get(sessionId)?.close();
    const page = await browser.newPage();
    this.pages.set(sessionId, page);
    this.throwIfClosing();
    await page.goto(url, { timeout: 0 });
  }

  throwIfClosing() {
    if (this.closing) throw new Error('[vitest] The provider was closed.');
  }

  async close() {
    this.closing = true;
    const browser = await this.browser?.catch(() => undefined);
    this.browser = undefined;
    this.pages.clear();
    await browser?.close();
  }
}
