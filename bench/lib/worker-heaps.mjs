// The JavaScript heap of each dedicated worker in the bench's Chromium, after a garbage
// collection, read over the DevTools protocol. A worker has no heap figure of its own to
// give (`performance.memory` is the window's only), so the driver asks V8 for it.

/**
 * @typedef {{ readonly id: string; readonly url: string; readonly usedBytes: number }} WorkerHeap
 * @typedef {{
 *   call(method: string, params?: object): Promise<{ result?: any; error?: unknown }>;
 *   detach(): Promise<void>;
 * }} WorkerSession
 */

/**
 * Collects garbage in every dedicated worker of the browser, then reads its used heap.
 * @param {import('playwright').Browser} browser
 * @returns {Promise<WorkerHeap[]>}
 */
export async function workerHeaps(browser) {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { targetInfos } = await cdp.send('Target.getTargets');
    const heaps = [];
    for (const target of targetInfos.filter((info) => info.type === 'worker')) {
      const usedBytes = await heapOf(cdp, target.targetId);
      if (usedBytes !== undefined) heaps.push({ id: target.targetId, url: target.url, usedBytes });
    }
    return heaps;
  } finally {
    await cdp.detach();
  }
}

/**
 * Sessions with the first `count` dedicated workers whose script URLs `match`, waiting up to
 * 30 s for them to start: for a profile of them (`bench/lab/profile.mjs`).
 * @param {import('playwright').Browser} browser
 * @param {(url: string) => boolean} matches
 * @param {number} [count]
 * @returns {Promise<(WorkerSession & { readonly url: string })[]>}
 */
export async function workerSessions(browser, matches, count = 1) {
  const cdp = await browser.newBrowserCDPSession();
  /** @type {Map<string, WorkerSession & { readonly url: string }>} */
  const sessions = new Map();
  let attached = 0;
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    const { targetInfos } = await cdp.send('Target.getTargets');
    for (const target of targetInfos) {
      if (target.type !== 'worker' || !matches(target.url) || sessions.has(target.targetId))
        continue;
      const session = await attach(cdp, target.targetId);
      if (!session) continue;
      attached += 1;
      sessions.set(target.targetId, {
        url: target.url,
        call: session.call,
        detach: async () => {
          await session.detach();
          attached -= 1;
          if (attached === 0) await cdp.detach();
        },
      });
    }
    if (sessions.size >= count) return [...sessions.values()];
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  // The last session detached takes the browser session with it.
  if (sessions.size === 0) await cdp.detach();
  else await Promise.all([...sessions.values()].map((session) => session.detach()));
  throw new Error(`Fewer than ${count} workers of the page matched within 30 s.`);
}

/**
 * One worker's used heap after a collection, or `undefined` for a worker that ended meanwhile.
 * @param {import('playwright').CDPSession} cdp
 * @param {string} targetId
 * @returns {Promise<number | undefined>}
 */
async function heapOf(cdp, targetId) {
  const session = await attach(cdp, targetId);
  if (!session) return undefined;
  try {
    await session.call('HeapProfiler.collectGarbage');
    return (await session.call('Runtime.getHeapUsage')).result?.usedSize;
  } finally {
    await session.detach();
  }
}

/**
 * A session with one worker, or `undefined` for a worker that ended before it was reached.
 * Playwright's CDP sessions cannot address a child session directly, so the worker's session
 * is reached through `Target.sendMessageToTarget`. A worker that ends mid-call answers
 * nothing more: its pending calls end with an empty answer.
 * @param {import('playwright').CDPSession} cdp
 * @param {string} targetId
 * @returns {Promise<WorkerSession | undefined>}
 */
async function attach(cdp, targetId) {
  let sessionId;
  try {
    ({ sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: false }));
  } catch {
    // The worker ended between the listing and now (a disposed agent's worker goes within a second).
    return undefined;
  }
  /** @type {Map<number, (message: { result?: any; error?: unknown }) => void>} */
  const answers = new Map();
  /** @param {{ sessionId: string; message: string }} event */
  const onMessage = (event) => {
    if (event.sessionId !== sessionId) return;
    const message = JSON.parse(event.message);
    answers.get(message.id)?.(message);
    answers.delete(message.id);
  };
  /** @param {{ sessionId: string }} event */
  const onDetached = (event) => {
    if (event.sessionId !== sessionId) return;
    for (const answer of answers.values()) answer({});
    answers.clear();
  };
  cdp.on('Target.receivedMessageFromTarget', onMessage);
  cdp.on('Target.detachedFromTarget', onDetached);
  let nextId = 0;
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const id = ++nextId;
        answers.set(id, resolve);
        void cdp.send('Target.sendMessageToTarget', {
          sessionId,
          message: JSON.stringify({ id, method, params }),
        });
      }),
    detach: async () => {
      cdp.off('Target.receivedMessageFromTarget', onMessage);
      cdp.off('Target.detachedFromTarget', onDetached);
      // Fails only for a session the browser already ended with its worker: nothing to detach.
      await cdp.send('Target.detachFromTarget', { sessionId }).catch(() => {});
    },
  };
}
