// A browser command for tests (`commands.workerThreads()`): the test browser's dedicated
// worker threads, read from Linux's /proc. A terminated worker's JavaScript can keep running
// on its thread for a while, so only the thread itself shows when a stuck tool really stopped.
import { readdirSync, readFileSync } from 'node:fs';

/**
 * A dedicated worker's OS thread in one of the test browser's renderer processes.
 * @typedef {{ readonly pid: number; readonly tid: number; readonly cpuTicks: number }} WorkerThread
 */

/**
 * The browser's dedicated worker threads with the CPU time each used so far (clock ticks,
 * utime + stime); `null` where there is no /proc.
 * @param {import('vitest/node').BrowserCommandContext} context
 * @returns {Promise<WorkerThread[] | null>}
 */
export async function workerThreads({ context }) {
  const browser = context.browser();
  if (!browser) return null;
  try {
    readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  // CDP names this browser's renderers, so other Chromium instances on the machine are left out.
  const session = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = /** @type {{ processInfo: Array<{ type: string; id: number }> }} */ (
      await session.send('SystemInfo.getProcessInfo')
    );
    return processInfo
      .filter((process) => process.type === 'renderer')
      .flatMap((process) => threadsOf(process.id));
  } finally {
    await session.detach();
  }
}

/**
 * @param {number} pid
 * @returns {WorkerThread[]}
 */
function threadsOf(pid) {
  /** @type {string[]} */
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // The process exited meanwhile.
  }
  return tids.flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Chromium names these threads "DedicatedWorker thread" (cut to 15 characters by Linux).
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!name.startsWith('DedicatedWorker')) return [];
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ pid, tid: Number(tid), cpuTicks: Number(fields[11]) + Number(fields[12]) }];
    } catch {
      return [];
    }
  });
}
