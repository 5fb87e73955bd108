// The JavaScript heap of each dedicated worker in the bench's Chromium, after a garbage
// collection, read over the DevTools protocol. A worker has no heap figure of its own to
// give (`performance.memory` is the window's only), so the driver asks V8 for it.

/**
 * @typedef {{ readonly id: string; readonly url: string; readonly usedBytes: number }} WorkerHeap
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
 * One worker's used heap after a collection, or `undefined` for a worker that ended meanwhile.
 * Playwright's CDP sessions cannot address a child session directly, so the worker's session
 * is reached through `Target.sendMessageToTarget`.
 * @param {import('playwright').CDPSession} cdp
 * @param {string} targetId
 * @returns {Promise<number | undefined>}
 */
async function heapOf(cdp, targetId) {
  let sessionId;
  try {
    ({ sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: false }));
  } catch {
    // The worker ended between the listing and now (a disposed agent's worker goes within a second).
    return undefined;
  }
  /** @type {Map<number, (message: { result?: { usedSize?: number }; error?: unknown }) => void>} */
  const answers = new Map();
  /** @param {{ sessionId: string; message: string }} event */
  const onMessage = (event) => {
    if (event.sessionId !== sessionId) return;
    const message = JSON.parse(event.message);
    answers.get(message.id)?.(message);
  };
  /**
   * A worker that ends mid-read answers nothing more: its pending calls end with no figure.
   * @param {{ sessionId: string }} event
   */
  const onDetached = (event) => {
    if (event.sessionId !== sessionId) return;
    for (const answer of answers.values()) answer({});
    answers.clear();
  };
  cdp.on('Target.receivedMessageFromTarget', onMessage);
  cdp.on('Target.detachedFromTarget', onDetached);
  let nextId = 0;
  /** @param {string} method */
  const call = (method) =>
    new Promise((resolve) => {
      const id = ++nextId;
      answers.set(id, resolve);
      void cdp.send('Target.sendMessageToTarget', {
        sessionId,
        message: JSON.stringify({ id, method, params: {} }),
      });
    });
  try {
    await call('HeapProfiler.collectGarbage');
    const answer = /** @type {{ result?: { usedSize?: number } }} */ (
      await call('Runtime.getHeapUsage')
    );
    return answer.result?.usedSize;
  } finally {
    cdp.off('Target.receivedMessageFromTarget', onMessage);
    cdp.off('Target.detachedFromTarget', onDetached);
    // Fails only for a session the browser already ended with its worker: nothing to detach.
    await cdp.send('Target.detachFromTarget', { sessionId }).catch(() => {});
  }
}
