import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

// The Redis server the proxy's shared-store tests and the proxy bench run against:
// Debian's `redis-server`, installed when missing (as root), started on 127.0.0.1 on a
// free port in a temporary folder, with nothing saved to disk, and stopped after.

/** Path of the server binary (`AIRLOCK_REDIS_SERVER`). */
export const redisServerPath = process.env.AIRLOCK_REDIS_SERVER ?? '/usr/bin/redis-server';

/**
 * Makes sure `redis-server` exists: installs Debian's package when this runs as root on
 * Debian; otherwise says exactly what to install.
 * @returns {boolean} whether it is there
 */
export function ensureRedis() {
  if (existsSync(redisServerPath)) return true;
  const isRoot = process.getuid?.() === 0;
  if (!process.env.AIRLOCK_REDIS_SERVER && isRoot && existsSync('/usr/bin/apt-get')) {
    console.log(`Missing ${redisServerPath}; installing Debian's redis-server.`);
    for (const args of [
      ['update', '-qq'],
      ['install', '-y', '-qq', '--no-install-recommends', 'redis-server'],
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
    if (existsSync(redisServerPath)) return true;
  }
  console.log(
    `No redis-server at ${redisServerPath}. Install it with ` +
      '`sudo apt-get update && sudo apt-get install -y --no-install-recommends redis-server`, ' +
      'or point AIRLOCK_REDIS_SERVER at one.',
  );
  return false;
}

/**
 * A port free on 127.0.0.1 just now.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Resolves once something accepts connections on `port`, or rejects after `timeoutMs`.
 * @param {number} port
 * @param {number} timeoutMs
 * @returns {Promise<void>}
 */
async function waitForPort(port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port}.`);
    await sleep(20);
  }
}

/**
 * @typedef {{
 *   readonly url: string;
 *   readonly port: number;
 *   stop(): Promise<void>;
 *   start(): Promise<void>;
 *   close(): Promise<void>;
 * }} RedisServer
 */

/**
 * Starts a throwaway `redis-server` on 127.0.0.1. `stop()` ends it (the port stays
 * reserved for `start()`, which starts it again empty); `close()` ends it for good and
 * removes its folder.
 * @returns {Promise<RedisServer>}
 */
export async function startRedis() {
  if (!ensureRedis()) throw new Error('redis-server is not installed.');
  const dir = mkdtempSync(join(tmpdir(), 'airlock-redis-'));
  const port = await freePort();
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  const start = async () => {
    child = spawn(
      redisServerPath,
      [
        '--bind',
        '127.0.0.1',
        '--port',
        String(port),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'yes',
      ],
      { stdio: 'ignore' },
    );
    await waitForPort(port, 10_000);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    stop,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `node scripts/redis.mjs`: installs redis-server if needed; exits non-zero if it cannot. */
if (import.meta.url === `file://${process.argv[1]}`) {
  process.exit(ensureRedis() ? 0 : 1);
}
