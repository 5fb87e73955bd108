// A vitest browser provider for WebKitGTK (Debian's webkit2gtk-driver and its MiniBrowser)
// over classic WebDriver, spoken directly: four HTTP calls need no client library, and
// the driver refuses BiDi. Playwright drives only its own WebKit build (`--inspector-pipe`),
// which cannot be downloaded here. GTK's MiniBrowser has no headless mode, so without a
// DISPLAY the provider starts a private Xvfb for it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { defineBrowserProvider } from '@vitest/browser';

/**
 * @typedef {{
 *   readonly driverPath: string;
 *   readonly browserPath: string;
 *   readonly xvfbPath?: string;
 * }} WebkitProviderOptions
 */

/**
 * The provider option for a project's `browser.provider`.
 * @param {WebkitProviderOptions} options
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
  /** @type {Promise<{ endpoint: string; session: string }> | undefined} */
  started;
  /** @type {import('node:child_process').ChildProcess[]} */
  children = [];
  closing = false;
  /** @type {number | undefined} */
  driverPid;

  /** @param {WebkitProviderOptions} options */
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
    };
  }

  /**
   * @param {string} _sessionId
   * @param {string} url
   */
  async openPage(_sessionId, url) {
    this.throwIfClosing();
    this.started ??= this.start();
    this.started.catch(() => {
      this.started = undefined;
    });
    const { endpoint, session } = await this.started;
    this.throwIfClosing();
    await command(endpoint, 'POST', `/session/${session}/url`, { url });
  }

  async start() {
    const display = process.env.DISPLAY || (await this.startXvfb());
    const port = await freePort();
    const driver = this.spawnChild(this.options.driverPath, [`--port=${port}`], {
      ...process.env,
      DISPLAY: display,
    });
    this.driverPid = driver.pid;
    const endpoint = `http://127.0.0.1:${port}`;
    await waitUntilReady(endpoint, driver);
    const { sessionId } = /** @type {{ sessionId: string }} */ (
      await command(endpoint, 'POST', '/session', {
        capabilities: {
          alwaysMatch: {
            browserName: 'MiniBrowser',
            'webkitgtk:browserOptions': {
              binary: this.options.browserPath,
              args: ['--automation'],
            },
          },
        },
      })
    );
    return { endpoint, session: sessionId };
  }

  /** Starts Xvfb on a display it picks itself (`-displayfd`), so parallel runs never clash. */
  async startXvfb() {
    const xvfb = spawn(
      this.options.xvfbPath ?? 'Xvfb',
      ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    this.track(xvfb);
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

  /**
   * @param {string} path
   * @param {string[]} args
   * @param {NodeJS.ProcessEnv} env
   */
  spawnChild(path, args, env) {
    return this.track(spawn(path, args, { env, stdio: 'ignore' }));
  }

  /** @param {import('node:child_process').ChildProcess} child */
  track(child) {
    this.children.push(child);
    // A crashed or interrupted vitest must not leave a browser or an X server behind.
    const kill = () => child.kill();
    process.once('exit', kill);
    child.once('exit', () => process.off('exit', kill));
    return child;
  }

  throwIfClosing() {
    if (this.closing) throw new Error('[vitest] The provider was closed.');
  }

  async close() {
    this.closing = true;
    const started = await this.started?.catch(() => undefined);
    this.started = undefined;
    // Ending the session closes MiniBrowser; the driver and the X server are ours to end.
    if (started) {
      await command(started.endpoint, 'DELETE', `/session/${started.session}`).catch(() => {});
    }
    for (const child of this.children.reverse()) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill();
        await once(child, 'exit');
      }
    }
    this.children = [];
  }
}

/**
 * One WebDriver command; a WebDriver error becomes a thrown Error with its message.
 * @param {string} endpoint
 * @param {'GET' | 'POST' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<unknown>}
 */
async function command(endpoint, method, path, body) {
  const response = await fetch(`${endpoint}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const reply = /** @type {{ value?: { error?: string; message?: string } }} */ (
    await response.json()
  );
  if (!response.ok || reply.value?.error) {
    throw new Error(
      `WebKitWebDriver ${method} ${path}: ${reply.value?.error ?? response.status}: ${reply.value?.message ?? ''}`,
    );
  }
  return reply.value;
}

/**
 * @param {string} endpoint
 * @param {import('node:child_process').ChildProcess} driver
 */
async function waitUntilReady(endpoint, driver) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (driver.exitCode !== null) throw new Error(`WebKitWebDriver exited (${driver.exitCode}).`);
    try {
      const status = /** @type {{ ready?: boolean }} */ (await command(endpoint, 'GET', '/status'));
      if (status.ready) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('WebKitWebDriver did not get ready within 30 s.');
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
