// `npm run bench:lab:first-text -- --phases`: where a run's way to its first text goes, in the
// worker of each contestant (Airlock's agent worker, the raw loop's worker), timed from the
// page's call. Probes are put into the worker from outside, around the platform functions
// every contestant calls, so nothing of Airlock's source changes for them: `fetch` (the
// request leaves, its headers come), Web Locks (the conversation's lock asked for and held),
// IndexedDB (the first write with messages, the run's input: its transaction opened, and
// committed) and `postMessage` (the first message carrying a text delta). They add a little
// work to the path they time, so their figures say where the time goes, not what the verdict
// reads.

/** Phases in the order a run goes through them; a contestant without one shows `-`. */
export const PHASES = /** @type {const} */ ([
  'lock asked',
  'lock held',
  'request sent',
  'input write opened',
  'input stored',
  'headers',
  'first text sent',
]);

/**
 * The name of a conversation's Web Lock (`airlock:<database>:conversation:<id>`) and not of
 * the locks of its run's relay to other tabs, whose names go on after the id
 * (`…:<id>:relay:watch`). The bench's conversation ids are UUIDs, without a colon.
 */
export const CONVERSATION_LOCK = /^airlock:.+:conversation:[^:]+$/;

/** Workers that run a contestant's loop, by their script's name. */
const LOOP_WORKER = /airlock-agent\.worker|raw-loop\.worker/;

/**
 * Puts the probes into the page's loop worker (once per page; a second call finds them).
 * @param {import('playwright').Page} page
 */
export async function probeLoopWorker(page) {
  const worker =
    page.workers().find((each) => LOOP_WORKER.test(each.url())) ??
    (await page.waitForEvent('worker', {
      predicate: (each) => LOOP_WORKER.test(each.url()),
      timeout: 30_000,
    }));
  await worker.evaluate((conversationLock) => {
    const isConversationLock = new RegExp(conversationLock);
    const scope = /** @type {any} */ (globalThis);
    if (scope.firstTextPhases) return;
    /** @type {{ marks: [string, number][]; textSent: boolean }} */
    const probe = { marks: [], textSent: false };
    scope.firstTextPhases = probe;
    const mark = (/** @type {string} */ phase) =>
      probe.marks.push([phase, performance.timeOrigin + performance.now()]);

    const fetchBefore = globalThis.fetch;
    globalThis.fetch = (...args) => {
      mark('request sent');
      return fetchBefore(...args).then((response) => {
        mark('headers');
        return response;
      });
    };

    const locks = navigator.locks;
    /** @type {(...args: any[]) => Promise<unknown>} */
    const requestLock = locks.request.bind(locks);
    /** @type {any} */ (locks).request = (
      /** @type {string} */ name,
      /** @type {any[]} */ ...rest
    ) => {
      if (!isConversationLock.test(name)) return requestLock(name, ...rest);
      mark('lock asked');
      const callback = rest.pop();
      return requestLock(name, ...rest, (/** @type {Lock | null} */ lock) => {
        if (lock) mark('lock held');
        return callback(lock);
      });
    };

    const transaction = IDBDatabase.prototype.transaction;
    /** @type {any} */ (IDBDatabase.prototype).transaction = function (
      /** @type {string | string[]} */ stores,
      /** @type {IDBTransactionMode | undefined} */ mode,
      /** @type {IDBTransactionOptions | undefined} */ options,
    ) {
      const opened = transaction.call(this, stores, mode, options);
      const names = typeof stores === 'string' ? [stores] : [...stores];
      if (mode === 'readwrite' && names.includes('messages')) {
        mark('input write opened');
        opened.addEventListener('complete', () => mark('input stored'));
      }
      return opened;
    };

    /** @param {{ postMessage(message: unknown, ...rest: any[]): void }} prototype */
    const watchPosts = (prototype) => {
      const post = prototype.postMessage;
      prototype.postMessage = function (message, ...rest) {
        if (!probe.textSent && JSON.stringify(message)?.includes('"text-delta"')) {
          probe.textSent = true;
          mark('first text sent');
        }
        return post.call(this, message, ...rest);
      };
    };
    watchPosts(MessagePort.prototype);
    // A global scope's operations are its own properties, not its prototype's.
    watchPosts(/** @type {any} */ (globalThis));
  }, CONVERSATION_LOCK.source);
  return worker;
}

/**
 * The phases of the run that just ended, in ms from its call on the page (the first mark of
 * each after the call), and clears the marks for the next run.
 * @param {import('playwright').Page} page
 * @param {import('playwright').Worker} worker
 * @param {string} contestant
 * @returns {Promise<Partial<Record<(typeof PHASES)[number], number>>>}
 */
export async function takePhases(page, worker, contestant) {
  const startedAt = await page.evaluate(
    (name) => /** @type {any} */ (globalThis).bench.lastRunStartedAt(name),
    contestant,
  );
  const marks = await worker.evaluate(() => {
    const probe = /** @type {any} */ (globalThis).firstTextPhases;
    probe.textSent = false;
    return /** @type {[string, number][]} */ (probe.marks.splice(0));
  });
  return phasesFrom(marks, startedAt);
}

/**
 * Each phase's first mark at or after `startedAt`, in ms from it. Marks of a phase not in
 * {@link PHASES}, and those made before the run was called (the last run's tail), are left out.
 * @param {readonly (readonly [string, number])[]} marks
 * @param {number} startedAt
 * @returns {Partial<Record<(typeof PHASES)[number], number>>}
 */
export function phasesFrom(marks, startedAt) {
  /** @type {Partial<Record<(typeof PHASES)[number], number>>} */
  const phases = {};
  for (const [phase, at] of marks) {
    if (!(/** @type {readonly string[]} */ (PHASES).includes(phase))) continue;
    const key = /** @type {(typeof PHASES)[number]} */ (phase);
    if (at >= startedAt && phases[key] === undefined) phases[key] = at - startedAt;
  }
  return phases;
}

/**
 * A table of each phase's median per entrant, and of the page's first text beside them.
 * @param {Record<string, Partial<Record<(typeof PHASES)[number], number>>[]>} phasesByLabel
 * @param {Record<string, number[]>} firstTextByLabel
 * @param {(values: readonly number[]) => { p50: number }} summarize
 */
export function phaseTable(phasesByLabel, firstTextByLabel, summarize) {
  const labels = Object.keys(phasesByLabel);
  const width = Math.max(...labels.map((label) => label.length), 10);
  const cell = (/** @type {readonly number[]} */ values) =>
    (values.length > 0 ? summarize(values).p50.toFixed(1) : '-').padStart(width);
  const rows = [...PHASES, 'first text at the page'].map((phase) => {
    const cells = labels.map((label) =>
      cell(
        phase === 'first text at the page'
          ? (firstTextByLabel[label] ?? [])
          : (phasesByLabel[label] ?? []).flatMap((run) => {
              const at = run[/** @type {(typeof PHASES)[number]} */ (phase)];
              return at === undefined ? [] : [at];
            }),
      ),
    );
    return `${phase.padEnd(24)}${cells.join('  ')}`;
  });
  return [
    "Where the time goes (medians, ms from the page's call; probes in the workers):",
    `${''.padEnd(24)}${labels.map((label) => label.padStart(width)).join('  ')}`,
    ...rows,
  ];
}
