/**
 * Runs a bench page's measurement and hands the outcome to `bench/run.mjs`, which waits
 * for `benchResults` or `benchError` on the page; the figures are also shown on the page.
 */
export function reportBench(measure: () => Promise<unknown>): void {
  measure().then(
    (results) => {
      const log = document.getElementById('log');
      if (log) log.textContent = JSON.stringify(results, null, 2);
      (globalThis as { benchResults?: unknown }).benchResults = results;
    },
    (error: unknown) => {
      (globalThis as { benchError?: string }).benchError = String(
        error instanceof Error ? error.stack : error,
      );
    },
  );
}
