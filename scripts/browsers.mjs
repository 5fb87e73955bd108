import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// The browsers the tests and the bench drive: Debian's packages by default (no browser
// builds of Playwright's own can be downloaded here), or the binaries the env vars name.

/** Debian's folder for architecture-specific libraries, where MiniBrowser lives. */
const multiarch = process.arch === 'arm64' ? 'aarch64-linux-gnu' : 'x86_64-linux-gnu';

/**
 * One browser engine the suite runs in: the files it needs and the Debian packages that
 * bring them.
 * @typedef {{
 *   readonly name: 'chromium' | 'firefox' | 'webkit';
 *   readonly files: ReadonlyArray<{ readonly path: string; readonly envVar: string }>;
 *   readonly packages: readonly string[];
 * }} BrowserSetup
 */

/** Path of the Chromium binary (`AIRLOCK_CHROMIUM`). */
export const chromiumPath = process.env.AIRLOCK_CHROMIUM ?? '/usr/bin/chromium';

/** Path of the Firefox binary (`AIRLOCK_FIREFOX`); Debian ships the ESR. */
export const firefoxPath = process.env.AIRLOCK_FIREFOX ?? '/usr/bin/firefox-esr';

/** Path of WebKitGTK's WebDriver (`AIRLOCK_WEBKIT_DRIVER`), from Debian's webkit2gtk-driver. */
export const webkitDriverPath = process.env.AIRLOCK_WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';

/**
 * Path of the WebKitGTK browser the driver starts (`AIRLOCK_WEBKIT_BROWSER`): the
 * MiniBrowser of libwebkit2gtk-4.1-0, which webkit2gtk-driver depends on.
 */
export const webkitBrowserPath =
  process.env.AIRLOCK_WEBKIT_BROWSER ?? `/usr/lib/${multiarch}/webkit2gtk-4.1/MiniBrowser`;

/** Path of the X server that gives MiniBrowser a display when there is none (`AIRLOCK_XVFB`). */
export const xvfbPath = process.env.AIRLOCK_XVFB ?? '/usr/bin/Xvfb';

/**
 * What starts a WebKitGTK session (`scripts/browsers/webkit-session.mjs`): the paths above.
 * @type {import('./browsers/webkit-session.mjs').WebkitOptions}
 */
export const webkitOptions = {
  driverPath: webkitDriverPath,
  browserPath: webkitBrowserPath,
  xvfbPath,
};

/** Flags for a headless Chromium running as root on a machine with no outside network. */
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * How puppeteer-core launches Firefox, for the browser suite and the end-to-end tests.
 * Puppeteer follows every request of the browser over the protocol and asks Firefox to keep
 * a copy of every request and response body, for `HTTPResponse.content()`. A test page loads
 * hundreds of modules from the dev server, and its workers load them again: Firefox's parent
 * process spent its main thread on that, and its memory grew without end (2.6 GB after seven
 * files, 6.4 GB a third of the way through the suite), slowing every file after it. No test
 * reads requests through the protocol, so neither is asked for: `networkEnabled: false`, and
 * a total of 1 byte for kept bodies, which makes Puppeteer's request for them fail (it then
 * goes on without). The same seven files took 103 s instead of 212 s, the memory flat at 0.4 GB.
 */
export const firefoxLaunchOptions = {
  networkEnabled: false,
  extraPrefsFirefox: { 'remote.network.maxTotalDataSize': 1 },
};

/** @type {Record<BrowserSetup['name'], BrowserSetup>} */
export const browserSetups = {
  chromium: {
    name: 'chromium',
    files: [{ path: chromiumPath, envVar: 'AIRLOCK_CHROMIUM' }],
    packages: ['chromium'],
  },
  firefox: {
    name: 'firefox',
    files: [{ path: firefoxPath, envVar: 'AIRLOCK_FIREFOX' }],
    packages: ['firefox-esr'],
  },
  webkit: {
    name: 'webkit',
    files: [
      { path: webkitDriverPath, envVar: 'AIRLOCK_WEBKIT_DRIVER' },
      { path: webkitBrowserPath, envVar: 'AIRLOCK_WEBKIT_BROWSER' },
      // GTK's MiniBrowser has no headless mode; without a DISPLAY it gets a virtual one.
      ...(process.env.DISPLAY ? [] : [{ path: xvfbPath, envVar: 'AIRLOCK_XVFB' }]),
    ],
    packages: ['webkit2gtk-driver', 'xvfb'],
  },
};

/** Every engine, in the order the suite runs them. */
export const browserNames = /** @type {const} */ (['chromium', 'firefox', 'webkit']);

/**
 * The engines `AIRLOCK_BROWSERS` (a comma list, e.g. `chromium,firefox`) asks for; all
 * of them when it is unset. Throws on a name that is not one.
 * @returns {Array<BrowserSetup['name']>}
 */
export function selectedBrowsers(value = process.env.AIRLOCK_BROWSERS) {
  if (!value?.trim()) return [...browserNames];
  const names = value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  for (const name of names) {
    if (!(/** @type {readonly string[]} */ (browserNames).includes(name))) {
      throw new Error(
        `AIRLOCK_BROWSERS names "${name}"; the engines are ${browserNames.join(', ')}.`,
      );
    }
  }
  return /** @type {Array<BrowserSetup['name']>} */ ([...new Set(names)]);
}

/**
 * Makes sure every file the given engines need exists: what is missing is installed from
 * Debian's packages when this runs as root on Debian (one apt-get for all of them);
 * otherwise says exactly what to install.
 * @param {ReadonlyArray<BrowserSetup['name']>} names
 * @returns {boolean} whether every file is there
 */
export function ensureBrowsers(names) {
  const missing = () =>
    names.flatMap((name) =>
      browserSetups[name].files
        .filter((file) => !existsSync(file.path))
        .map((file) => ({ ...file, setup: browserSetups[name] })),
    );
  let absent = missing();
  if (absent.length === 0) return true;
  // A path the user chose is theirs to fix; installing a package would not put it there.
  const installable = absent.every((file) => !process.env[file.envVar]);
  const isRoot = process.getuid?.() === 0;
  const packages = [...new Set(absent.flatMap((file) => file.setup.packages))];
  if (installable && isRoot && existsSync('/usr/bin/apt-get')) {
    console.log(
      `Missing ${absent.map((file) => file.path).join(', ')}; installing Debian's ${packages.join(' ')}.`,
    );
    for (const args of [
      ['update', '-qq'],
      ['install', '-y', '-qq', '--no-install-recommends', ...packages],
    ]) {
      const apt = spawnSync('apt-get', args, {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
      if (apt.status !== 0) {
        console.log(`apt-get ${args.join(' ')} failed (exit ${apt.status}).`);
        return false;
      }
    }
    absent = missing();
    if (absent.length === 0) return true;
  }
  for (const file of absent) {
    console.log(
      `No ${file.setup.name} file at ${file.path}. Install it with ` +
        `\`sudo apt-get update && sudo apt-get install -y --no-install-recommends ${file.setup.packages.join(' ')}\`, ` +
        `or point ${file.envVar} at one.`,
    );
  }
  return false;
}

/**
 * `node scripts/browsers.mjs [names…]`: installs the engines named (default: those
 * `AIRLOCK_BROWSERS` selects) if needed; exits non-zero if it cannot.
 */
if (import.meta.url === `file://${process.argv[1]}`) {
  const names = selectedBrowsers(process.argv.slice(2).join(',') || undefined);
  process.exit(ensureBrowsers(names) ? 0 : 1);
}
