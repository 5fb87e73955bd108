// A vitest browser provider for WebKitGTK (Debian's webkit2gtk-driver and its MiniBrowser)
// over classic WebDriver (`webkit-session.mjs`). Playwright drives only its own WebKit
// build (`--inspector-pipe`), which cannot be downloaded here. Without Playwright there is
// no `userEvent` and no screenshots: the suite uses neither.
import { defineBrowserProvider } from '@vitest/browser';
import { WebkitSession } from './webkit-session.mjs';

/**
 * The provider option for a project's `browser.provider`.
 * @param {import('./webkit-session.mjs').WebkitOptions} options
 */
export function webkitGtk(options) {
  return defineBrowserProvider({
    name: 'webkitgtk',
    supportedBrowser: ['webkit'],
    options,
    providerFactory: () => new WebkitProvider(options),
  });
}

/** @typedef {import('vitest/node').BrowserProvider} BrowserProvider */

/** @implements {BrowserProvider} */
class WebkitProvider {
  name = 'webkitgtk';
  // One MiniBrowser window: vitest then runs the files one after the other in it.
  supportsParallelism = false;
  /** @type {Promise<WebkitSession> | undefined} */
  started;
  /** @type {number | undefined} */
  driverPid;
  closing = false;

  /** @param {import('./webkit-session.mjs').WebkitOptions} options */
  constructor(options) {
    this.options = options;
  }

  /**
   * What browser commands get besides vitest's own context: the driver's process, whose
   * tree (MiniBrowser, its WebKitWebProcess) `test/setup/worker-threads.mjs` reads.
   * @param {string} _sessionId
   */
  getCommandsContext(_sessionId) {
    return {
      browserProcess: {
        pid: () => this.driverPid,
        // WebKit's name for a dedicated worker's thread, in `WebKitWebProcess`. The
        // process also runs `llvmpipe-*` threads (software GL under Xvfb), busy at times.
        workerThreadName: 'WebCore: Worker',
      },
      /**
       * One WebDriver command of the session, `path` after `/session/<id>`
       * (`test/setup/user-click.mjs` clicks as a user with it).
       * @param {'GET' | 'POST' | 'DELETE'} method
       * @param {string} path
       * @param {unknown} [body]
       */
      webdriver: async (method, path, body) => {
        const session = await this.started;
        if (!session) throw new Error('[vitest] The WebKit session has not started.');
        return session.command(method, `/session/${session.id}${path}`, body);
      },
    };
  }

  /**
   * @param {string} _sessionId
   * @param {string} url
   */
  async openPage(_sessionId, url) {
    this.throwIfClosing();
    this.started ??= WebkitSession.start(this.options);
    this.started.catch(() => {
      this.started = undefined;
    });
    const session = await this.started;
    this.driverPid = session.driverPid;
    this.throwIfClosing();
    await session.navigate(url);
  }

  throwIfClosing() {
    if (this.closing) throw new Error('[vitest] The provider was closed.');
  }

  async close() {
    this.closing = true;
    const session = await this.started?.catch(() => undefined);
    this.started = undefined;
    await session?.close();
  }
}
