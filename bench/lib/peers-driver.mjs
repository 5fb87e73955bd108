// Drives the peers page: each contestant through the same scripted conversation, in
// rounds (the order rotates each round, so drift on a shared machine spreads evenly).
// Each round gives every contestant a fresh page (its own browser context and IndexedDB),
// sets it up once there, and makes five runs: a warm-up, the measured run, a run under the
// CPU profiler, and two more timed to their first text only.

/** @typedef {import('../peers/roster').ContestantName} ContestantName */
/** @typedef {import('../peers/main').RunSample} RunSample */
/**
 * What the page exposes to the driver (see bench/peers/main.ts).
 * @typedef {{
 *   setUp(name: ContestantName, scenarios: readonly string[]): Promise<void>;
 *   run(name: ContestantName): Promise<RunSample>;
 *   verify(name: ContestantName): Promise<string[]>;
 *   lastRunStartedAt(name: ContestantName): number;
 *   portThroughput(count: number): Promise<number>;
 * }} BenchApi
 */
// `page.evaluate` serialises its function, so each one reaches the page's `bench` itself.
/** @typedef {typeof globalThis & { bench: BenchApi }} BenchPage */
/**
 * A run's page-side figures plus the page thread's CPU as CDP's `Performance` domain
 * reports it.
 * @typedef {RunSample & { cdpScriptMs: number; cdpTaskMs: number }} MeasuredRun
 */
/**
 * Time to the first text of the measured run and of the two runs after the profiled one, in order.
 * @typedef {{ firstTextRunsMs: number[] }} FirstTextRuns
 */
/**
 * Sampled JavaScript and GC time on the page thread during the profiled run.
 * @typedef {{ pageJsMs: number; pageGcMs: number; pageProbeMs: number }} ProfiledRun
 */
/** @typedef {{ contestant: string; round: number; message: string }} Failure */

/** Text deltas in the delivery scenario, and messages in the raw MessagePort flood. */
export const DELIVERY_EVENTS = 10_000;
/** Sampling interval of the page's V8 CPU profiler, in microseconds. */
const PROFILER_INTERVAL_US = 100;
/**
 * Runs after the profiled one, on the same page, timed to their first text alone. The first
 * text of a page's second run is where the JIT recompiles a stream path it optimised during
 * the warm-up: one sample a page would stand for that moment only. They come last, so the
 * profiled run stays the page's third, as it was before they were added.
 */
const LATER_FIRST_TEXT_RUNS = 2;
/** Longest a page call may take: a run that hangs fails instead of stalling the bench. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * Rejects if `promise` has not settled within {@link CALL_TIMEOUT_MS}.
 * @template T
 * @param {Promise<T>} promise
 * @param {string} what
 * @returns {Promise<T>}
 */
async function within(promise, what) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    return await Promise.race([
      promise,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} did not finish within ${CALL_TIMEOUT_MS / 1000} s`)),
          CALL_TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One contestant's page: its own browser context, so its own IndexedDB.
 * @param {import('playwright').Browser} browser
 * @param {string} url
 */
export async function openBenchPage(browser, url) {
  const page = await browser.newPage();
  /** @type {string[]} */
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  await page.goto(url);
  await page.waitForFunction(() => 'benchReady' in globalThis, null, { timeout: 30_000 });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  return { page, cdp, pageErrors };
}

/**
 * Sets `name` up on the page (not measured) for runs of `scenarios`, in order.
 * @param {import('playwright').Page} page
 * @param {ContestantName} name
 * @param {readonly string[]} scenarios
 */
export function setUp(page, name, scenarios) {
  return within(
    page.evaluate(
      ([contestant, chosen]) =>
        /** @type {BenchPage} */ (globalThis).bench.setUp(contestant, chosen),
      /** @type {const} */ ([name, scenarios]),
    ),
    `setting ${name} up`,
  );
}

/**
 * The contestant's next run, to its final answer.
 * @param {import('playwright').Page} page
 * @param {ContestantName} name
 */
export function run(page, name) {
  return within(
    page.evaluate(
      (contestant) => /** @type {BenchPage} */ (globalThis).bench.run(contestant),
      name,
    ),
    `${name}'s run`,
  );
}

/**
 * Throws unless the run did its whole scenario.
 * @param {import('playwright').Page} page
 * @param {ContestantName} name
 */
export async function verify(page, name) {
  const problems = await within(
    page.evaluate(
      (contestant) => /** @type {BenchPage} */ (globalThis).bench.verify(contestant),
      name,
    ),
    `checking ${name}'s run`,
  );
  if (problems.length > 0) throw new Error(`${name}: ${problems.join('; ')}`);
}

/** @param {import('playwright').CDPSession} cdp */
async function readMetrics(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const value = (/** @type {string} */ name) =>
    metrics.find((metric) => metric.name === name)?.value ?? Number.NaN;
  return { ScriptDuration: value('ScriptDuration'), TaskDuration: value('TaskDuration') };
}

/**
 * One run with the page's own probes, and the page thread's script and task time from
 * CDP `Performance.getMetrics`, read just before and just after it.
 * @param {import('playwright').Page} page
 * @param {import('playwright').CDPSession} cdp
 * @param {ContestantName} name
 * @returns {Promise<MeasuredRun>}
 */
async function measureOnce(page, cdp, name) {
  const before = await readMetrics(cdp);
  const sample = await run(page, name);
  const after = await readMetrics(cdp);
  await verify(page, name);
  return {
    ...sample,
    cdpScriptMs: (after.ScriptDuration - before.ScriptDuration) * 1000,
    cdpTaskMs: (after.TaskDuration - before.TaskDuration) * 1000,
  };
}

/**
 * The first text of each of the page's next {@link LATER_FIRST_TEXT_RUNS} runs (each
 * checked to have done its whole scenario).
 * @param {import('playwright').Page} page
 * @param {ContestantName} name
 */
async function laterFirstTexts(page, name) {
  const firstTexts = [];
  for (let index = 0; index < LATER_FIRST_TEXT_RUNS; index++) {
    firstTexts.push((await run(page, name)).firstTextMs);
    await verify(page, name);
  }
  return firstTexts;
}

/**
 * One run under the page's V8 sampling profiler (CDP `Profiler`), adding up the samples
 * spent in JavaScript and in GC. CDP's `ScriptDuration` misses promise reactions (a
 * `fetch` stream read on the page runs almost entirely in them), so this is the page's
 * script time. The bench's own probes (the frame loop, the long-task observer) run on
 * every contestant's page: their samples, told apart by their file and including the
 * browser functions they call, are counted apart as `pageProbeMs`. The profiler slows the
 * run, so nothing else is taken from it.
 * @param {import('playwright').Page} page
 * @param {import('playwright').CDPSession} cdp
 * @param {ContestantName} name
 * @returns {Promise<ProfiledRun>}
 */
async function profileOnce(page, cdp, name) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: PROFILER_INTERVAL_US });
  await cdp.send('Profiler.start');
  // The profiler is stopped whether or not the run finished.
  const failure = await run(page, name).then(
    () => undefined,
    (/** @type {unknown} */ error) => error ?? new Error('The run failed.'),
  );
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.send('Profiler.disable');
  if (failure) throw failure;
  await verify(page, name);
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame.functionName]));
  const probe = probeNodes(profile.nodes);
  let pageJsMs = 0;
  let pageGcMs = 0;
  let pageProbeMs = 0;
  // A sample's time is the delta before it, as DevTools counts it, up to twice the interval:
  // a longer delta means the thread was not running (another process had the core), and
  // counting it whole would charge that wait to whatever function happened to be on the stack.
  profile.samples?.forEach((id, index) => {
    const ms = Math.min(profile.timeDeltas?.[index] ?? 0, 2 * PROFILER_INTERVAL_US) / 1000;
    const what = nodes.get(id);
    if (what === '(garbage collector)') pageGcMs += ms;
    else if (what === '(idle)' || what === '(program)' || what === '(root)') return;
    else if (probe.has(id)) pageProbeMs += ms;
    else pageJsMs += ms;
  });
  return { pageJsMs, pageGcMs, pageProbeMs };
}

/**
 * The ids of the profile's nodes in the bench's probes (`bench/peers/probes.ts`, a file of
 * its own in the build) or called from them.
 * @param {{ id: number; callFrame: { url: string }; children?: number[] }[]} all
 */
function probeNodes(all) {
  const byId = new Map(all.map((node) => [node.id, node]));
  const found = new Set();
  /** @param {number} id */
  const mark = (id) => {
    if (found.has(id)) return;
    found.add(id);
    for (const child of byId.get(id)?.children ?? []) mark(child);
  };
  for (const node of all) if (/\/probes-[^/]*\.js$/.test(node.callFrame.url)) mark(node.id);
  return found;
}

/**
 * @template T
 * @param {readonly T[]} items
 * @param {number} by
 */
function rotate(items, by) {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/**
 * Runs every contestant through `scenario`, `runs` rounds, numbered on from `firstRound`
 * (0 unless more rounds are added to earlier ones). With `quick`, one plain run per page
 * (no warm-up, no profiled run): the smoke check.
 * @param {{
 *   browser: import('playwright').Browser;
 *   url: string;
 *   names: readonly ContestantName[];
 *   scenario: string;
 *   runs: number;
 *   firstRound?: number;
 *   quick: boolean;
 *   log: (line: string) => void;
 * }} options
 */
export async function runContestants({
  browser,
  url,
  names,
  scenario,
  runs,
  firstRound = 0,
  quick,
  log,
}) {
  /** @type {Record<string, (MeasuredRun & Partial<ProfiledRun> & Partial<FirstTextRuns> & { round: number })[]>} */
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  /** @type {Failure[]} */
  const failures = [];
  for (let round = firstRound; round < firstRound + runs; round++) {
    for (const name of rotate(names, round)) {
      const { page, cdp, pageErrors } = await openBenchPage(browser, url);
      try {
        await setUp(
          page,
          name,
          Array.from({ length: quick ? 1 : 3 + LATER_FIRST_TEXT_RUNS }, () => scenario),
        );
        if (!quick) await measureOnce(page, cdp, name);
        const measured = await measureOnce(page, cdp, name);
        /** @type {MeasuredRun & Partial<ProfiledRun> & Partial<FirstTextRuns> & { round: number }} */
        const sample = quick
          ? { ...measured, round: round + 1 }
          : {
              ...measured,
              ...(await profileOnce(page, cdp, name)),
              firstTextRunsMs: [measured.firstTextMs, ...(await laterFirstTexts(page, name))],
              round: round + 1,
            };
        samples[name]?.push(sample);
        log(
          `  ${name.padEnd(14)} round ${round + 1}: ${sample.wallMs.toFixed(0)} ms wall, ` +
            `${sample.pageJsMs?.toFixed(1) ?? '-'} ms page JS, ` +
            `${sample.cdpTaskMs.toFixed(1)} ms page tasks, ${sample.longTasks} long task(s)`,
        );
      } catch (error) {
        const message = [String(error), ...pageErrors].join(' | ');
        failures.push({ contestant: name, round: round + 1, message });
        log(`  ${name.padEnd(14)} round ${round + 1}: FAILED: ${message}`);
      } finally {
        await page.close();
      }
    }
  }
  return { samples, failures };
}

/**
 * Event delivery, one page per round: raw MessagePort throughput (a worker posting small
 * messages), then text-delta events per second at the page for Airlock and for the raw
 * loop in a worker, each streaming one long answer from a buffered source (see
 * bench/peers/workers/buffered-fetch.ts).
 * @param {{ browser: import('playwright').Browser; url: string; runs: number; firstRound?: number; log: (line: string) => void }} options
 */
export async function runDelivery({ browser, url, runs, firstRound = 0, log }) {
  /** @type {{ portEventsPerSecond: number; airlockEventsPerSecond: number; rawWorkerEventsPerSecond: number }[]} */
  const samples = [];
  /** @type {Failure[]} */
  const failures = [];
  const scenario = `delivery-${DELIVERY_EVENTS}`;
  /** @param {import('playwright').Page} page @param {number} count */
  const flood = (page, count) =>
    within(
      page.evaluate(
        (messages) => /** @type {BenchPage} */ (globalThis).bench.portThroughput(messages),
        count,
      ),
      'the MessagePort flood',
    );
  for (let round = firstRound; round < firstRound + runs; round++) {
    const { page, cdp, pageErrors } = await openBenchPage(browser, url);
    try {
      // Warm-ups: the flood's code paths, and each worker's first run.
      await flood(page, 1_000);
      for (const name of /** @type {const} */ (['airlock', 'raw-worker'])) {
        await setUp(page, name, ['delivery-1000', scenario]);
        await measureOnce(page, cdp, name);
      }
      const portEventsPerSecond = await flood(page, DELIVERY_EVENTS);
      const airlock = await measureOnce(page, cdp, 'airlock');
      const rawWorker = await measureOnce(page, cdp, 'raw-worker');
      const sample = {
        portEventsPerSecond,
        airlockEventsPerSecond: airlock.textDeltasPerSecond,
        rawWorkerEventsPerSecond: rawWorker.textDeltasPerSecond,
      };
      samples.push(sample);
      log(
        `  delivery round ${round + 1}: port ${sample.portEventsPerSecond.toFixed(0)}/s, ` +
          `Airlock ${sample.airlockEventsPerSecond.toFixed(0)}/s, ` +
          `raw worker ${sample.rawWorkerEventsPerSecond.toFixed(0)}/s`,
      );
    } catch (error) {
      const message = [String(error), ...pageErrors].join(' | ');
      failures.push({ contestant: 'delivery', round: round + 1, message });
      log(`  delivery round ${round + 1}: FAILED: ${message}`);
    } finally {
      await page.close();
    }
  }
  return { samples, failures };
}
