// One WebKitGTK browser under automation: WebKitWebDriver with a MiniBrowser session,
// spoken to over classic WebDriver (the driver refuses BiDi; four HTTP calls need no client
// library). GTK's MiniBrowser has no headless mode, so without a DISPLAY it gets a private
// Xvfb. Used by the vitest provider and the bench.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * @typedef {{
 *   readonly driverPath: string;
 *   readonly browserPath: string;
 *   readonly xvfbPath?: string;
 * }} WebkitOptions
 */

/** A started browser: its WebDriver session and the processes to end. */
export class WebkitSession {
  /** @type {import('node:child_process').ChildProcess[]} */
  #children = [];
  /** @type {string | undefined} */
  #endpoint;
  /** @type {string | undefined} */
  #session;
  /** Process id of the driver, the root of MiniBrowser's process tree. */
  /** @type {number | undefined} */
  driverPid;
  /** WebKitGTK's version, as the driver reports it. */
  browserVersion = '';
  /**
   * The last lines the driver and MiniBrowser (which shares its output) printed: an
   * error that says the page crashed carries them, the only trace such a crash leaves.
   * @type {string[]}
   */
  #output = [];

  /**
   * Starts Xvfb (when there is no DISPLAY), the driver and a MiniBrowser session.
   * @param {WebkitOptions} options
   */
  static async start(options) {
    const started = new WebkitSession();
    try {
      await started.#start(options);
    } catch (error) {
      await started.close();
      throw error;
    }
    return started;
  }

  /** @param {WebkitOptions} options */
  async #start(options) {
    const display = process.env.DISPLAY || (await this.#startXvfb(options.xvfbPath ?? 'Xvfb'));
    const port = await freePort();
    const driver = this.#track(
      spawn(options.driverPath, [`--port=${port}`], {
        env: { ...process.env, DISPLAY: display },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    for (const stream of [driver.stdout, driver.stderr]) {
      stream?.setEncoding('utf8').on('data', (/** @type {string} */ chunk) => {
        this.#output.push(...chunk.split('\n').filter((line) => line.trim() !== ''));
        this.#output.splice(0, this.#output.length - OUTPUT_LINES);
      });
    }
    this.driverPid = driver.pid;
    this.#endpoint = `http://127.0.0.1:${port}`;
    await this.#waitUntilReady(driver);
    const { sessionId, capabilities } =
      /** @type {{ sessionId: string; capabilities: { browserVersion?: string } }} */ (
        await this.command('POST', '/session', {
          capabilities: {
            alwaysMatch: {
              browserName: 'MiniBrowser',
              'webkitgtk:browserOptions': { binary: options.browserPath, args: ['--automation'] },
            },
          },
        })
      );
    this.#session = sessionId;
    this.browserVersion = capabilities.browserVersion ?? '';
  }

  /** The WebDriver session's id. */
  get id() {
    return this.#session;
  }

  /**
   * Navigates the window and waits for the page's load event.
   * @param {string} url
   */
  async navigate(url) {
    await this.command('POST', `/session/${this.#session}/url`, { url });
  }

  /**
   * Runs `script` (a function body; `return` gives the result) in the page.
   * @param {string} script
   * @returns {Promise<unknown>}
   */
  execute(script) {
    return this.command('POST', `/session/${this.#session}/execute/sync`, { script, args: [] });
  }

  /**
   * One WebDriver command; a WebDriver error becomes a thrown Error with its message.
   * @param {'GET' | 'POST' | 'DELETE'} method
   * @param {string} path
   * @param {unknown} [body]
   * @returns {Promise<unknown>}
   */
  async command(method, path, body) {
    const response = await fetch(`${this.#endpoint}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const reply = /** @type {{ value?: { error?: string; message?: string } }} */ (
      await response.json()
    );
    if (!response.ok || reply.value?.error) {
      const message = `WebKitWebDriver ${method} ${path}: ${reply.value?.error ?? response.status}: ${reply.value?.message ?? ''}`;
      if (!PAGE_LOST.test(message) || this.#output.length === 0) throw new Error(message);
      const explained = `${message}\nThe driver's and MiniBrowser's last output:\n${this.#output.join('\n')}`;
      throw this.#output.some((line) => line.includes(WEB_PROCESS_CRASHED))
        ? new WebProcessCrashed(explained)
        : new Error(explained);
    }
    return reply.value;
  }

  /** Ends the session (which closes MiniBrowser), then the driver and the X server. */
  async close() {
    if (this.#session) {
      await this.command('DELETE', `/session/${this.#session}`).catch(() => {});
      this.#session = undefined;
    }
    for (const child of this.#children.reverse()) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill();
        await once(child, 'exit');
      }
    }
    this.#children = [];
  }

  /**
   * Starts Xvfb on a display it picks itself (`-displayfd`), so parallel runs never clash.
   * @param {string} xvfbPath
   */
  async #startXvfb(xvfbPath) {
    const xvfb = this.#track(
      spawn(xvfbPath, ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'], {
        stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      }),
    );
    let output = '';
    const fd = /** @type {import('node:stream').Readable} */ (xvfb.stdio[3]);
    const stderr = /** @type {import('node:stream').Readable} */ (xvfb.stderr);
    stderr.on('data', (chunk) => {
      output += chunk;
    });
    const display = await new Promise((resolve, reject) => {
      fd.on('data', (chunk) => {
        const number = String(chunk).trim();
        if (/^\d+$/.test(number)) resolve(`:${number}`);
      });
      xvfb.once('error', reject);
      xvfb.once('exit', (code) => reject(new Error(`Xvfb exited (${code}): ${output.trim()}`)));
    });
    stderr.destroy();
    return /** @type {string} */ (display);
  }

  /** @param {import('node:child_process').ChildProcess} child */
  #track(child) {
    this.#children.push(child);
    // A crashed or interrupted run must not leave a browser or an X server behind.
    const kill = () => child.kill();
    process.once('exit', kill);
    child.once('exit', () => process.off('exit', kill));
    return child;
  }

  /** @param {import('node:child_process').ChildProcess} driver */
  async #waitUntilReady(driver) {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (driver.exitCode !== null) throw new Error(`WebKitWebDriver exited (${driver.exitCode}).`);
      try {
        const status = /** @type {{ ready?: boolean }} */ (await this.command('GET', '/status'));
        if (status.ready) return;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('WebKitWebDriver did not get ready within 30 s.');
  }
}

/** How many of the driver's and browser's last output lines a session keeps. */
const OUTPUT_LINES = 40;

/** The driver's errors that say the page's web process crashed or hung. */
const PAGE_LOST = /invalid session id|Could not parse script result/;

/** What MiniBrowser prints when the page's web process dies of a crash (not a hang). */
const WEB_PROCESS_CRASHED = 'WebProcess CRASHED';

/**
 * The page was lost because WebKit's web process crashed: an engine fault, named apart from
 * a failed assertion so that `scripts/test.mjs` can tell the two apart.
 */
export class WebProcessCrashed extends Error {
  /** @override */
  name = WebProcessCrashed.name;
}

/** A TCP port nobody listens on right now. */
async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('No TCP port found.');
  return address.port;
}
