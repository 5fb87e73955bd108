// A browser command for tests (`commands.workerThreads()`): the test browser's dedicated
// worker threads, read from Linux's /proc. A terminated worker's JavaScript can keep running
// on its thread for a while, so only the thread itself shows when a stuck tool really stopped.
import { readdirSync, readFileSync } from 'node:fs';

/**
 * A dedicated worker's OS thread in one of the test browser's processes.
 * `cpuTicks` is its CPU time so far in clock ticks (utime + stime, 10 ms each); `cpuMs` the
 * same time to the nanosecond from the scheduler (`schedstat`, then `exact`), or from the
 * ticks where the kernel keeps no `schedstat`.
 * @typedef {{ readonly pid: number; readonly tid: number; readonly cpuTicks: number; readonly cpuMs: number; readonly exact: boolean }} WorkerThread
 */

/**
 * What the Firefox and WebKit providers (`scripts/browsers/`) put in a command's context:
 * the root of the browser's process tree and the name the engine gives worker threads.
 * @typedef {{ readonly pid: () => number | undefined; readonly workerThreadName: string }} BrowserProcess
 */

/** Chromium names these threads "DedicatedWorker thread" (cut to 15 characters by Linux). */
const CHROMIUM_WORKER_THREAD = 'DedicatedWorker';

/**
 * The browser's dedicated worker threads with the CPU time each used so far (clock ticks,
 * utime + stime); `null` where there is no /proc or no way to find the browser's processes.
 * @param {import('vitest/node').BrowserCommandContext & { browserProcess?: BrowserProcess }} context
 * @returns {Promise<WorkerThread[] | null>}
 */
export async function workerThreads(context) {
  try {
    readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  // Only this run's browser: other browsers of the same engine may be busy on the machine.
  if (context.browserProcess) {
    const root = context.browserProcess.pid();
    if (root === undefined) return null;
    const name = context.browserProcess.workerThreadName;
    return processTree(root).flatMap((pid) => threadsOf(pid, name));
  }
  const browser = context.context?.browser();
  return browser ? chromiumWorkerThreads(browser) : null;
}

/**
 * The dedicated worker threads of a Playwright Chromium's renderers (the bench reads them too).
 * @param {import('playwright').Browser} browser
 * @returns {Promise<WorkerThread[]>}
 */
export async function chromiumWorkerThreads(browser) {
  // Playwright gives no process id, but CDP names this browser's renderers.
  const session = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = /** @type {{ processInfo: Array<{ type: string; id: number }> }} */ (
      await session.send('SystemInfo.getProcessInfo')
    );
    return processInfo
      .filter((process) => process.type === 'renderer')
      .flatMap((process) => threadsOf(process.id, CHROMIUM_WORKER_THREAD));
  } finally {
    await session.detach();
  }
}

/**
 * `root` and every process descended from it, found through each process's parent id.
 * @param {number} root
 * @returns {number[]}
 */
export function processTree(root) {
  /** @type {Map<number, number[]>} */
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = readStat(`/proc/${entry}/stat`)?.fields[1];
    if (parent === undefined) continue;
    const siblings = children.get(Number(parent)) ?? [];
    siblings.push(Number(entry));
    children.set(Number(parent), siblings);
  }
  const tree = [root];
  for (let index = 0; index < tree.length; index += 1) {
    tree.push(...(children.get(/** @type {number} */ (tree[index])) ?? []));
  }
  return tree;
}

/**
 * The name Linux gives process `pid` (cut to 15 characters); `undefined` once it is gone.
 * @param {number} pid
 */
export function processName(pid) {
  return readStat(`/proc/${pid}/stat`)?.name;
}

/**
 * The threads of process `pid` whose name starts with `name`.
 * @param {number} pid
 * @param {string} name
 * @returns {WorkerThread[]}
 */
function threadsOf(pid, name) {
  /** @type {string[]} */
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // The process exited meanwhile.
  }
  // Linux cuts thread names to 15 characters.
  const prefix = name.slice(0, 15);
  return tids.flatMap((tid) => {
    const stat = readStat(`/proc/${pid}/task/${tid}/stat`);
    if (!stat?.name.startsWith(prefix)) return [];
    // Fields after the name, from 3 (state) on: utime is field 14, stime 15.
    const cpuTicks = Number(stat.fields[11]) + Number(stat.fields[12]);
    const runNs = readRunNs(`/proc/${pid}/task/${tid}/schedstat`);
    return [
      {
        pid,
        tid: Number(tid),
        cpuTicks,
        cpuMs: runNs === undefined ? cpuTicks * 10 : runNs / 1e6,
        exact: runNs !== undefined,
      },
    ];
  });
}

/**
 * The time a thread has run on a CPU, in ns: the first field of its `schedstat`; `undefined`
 * when the kernel keeps none or the thread is gone.
 * @param {string} path
 */
function readRunNs(path) {
  try {
    const ns = Number(readFileSync(path, 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A /proc `stat` line split into the (parenthesised, possibly spaced) name and the fields
 * after it; `undefined` when the process or thread is gone.
 * @param {string} path
 */
function readStat(path) {
  try {
    const stat = readFileSync(path, 'utf8');
    return {
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      fields: stat.slice(stat.lastIndexOf(')') + 2).split(' '),
    };
  } catch {
    return undefined;
  }
}
