// What the figures were measured on, and the exact version of every package compared.
import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Cores, memory, OS, Node, Chromium, and the load average at the start and at the end.
 * @param {string} chromiumVersion `browser.version()`
 * @param {number[]} loadAtStart `os.loadavg()` when the bench began
 */
export function describeMachine(chromiumVersion, loadAtStart) {
  let distribution = `${os.type()} ${os.release()}`;
  try {
    const release = readFileSync('/etc/os-release', 'utf8');
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(release)?.[1];
    if (pretty) distribution = `${pretty} (${os.type()} ${os.release()})`;
  } catch {
    // Not Linux, or no os-release: the kernel line is enough.
  }
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: distribution,
    node: process.version,
    chromium: chromiumVersion,
    loadAverage: { start: loadAtStart, end: os.loadavg() },
  };
}

/**
 * Version in a package.json under the repository, or null when it is not installed.
 * @param {string} path from the repository root
 */
function versionAt(path) {
  try {
    const text = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
    return /** @type {{ version: string }} */ (JSON.parse(text)).version;
  } catch {
    return null;
  }
}

/** Versions of Airlock and every peer package, as installed. */
export function packageVersions() {
  const top = (/** @type {string} */ name) => versionAt(`node_modules/${name}/package.json`);
  return {
    airlock: versionAt('package.json'),
    ai: top('ai'),
    '@ai-sdk/openai': top('@ai-sdk/openai'),
    '@openai/agents': top('@openai/agents'),
    'openai (Airlock, hand-written loops)': top('openai'),
    'openai (@openai/agents)':
      versionAt('node_modules/@openai/agents-openai/node_modules/openai/package.json') ??
      top('openai'),
    zod: top('zod'),
    comlink: top('comlink'),
    dexie: top('dexie'),
  };
}
