/** Driving the demo page in the end-to-end test: sending messages, waiting for runs, watching text grow. */
import { expect } from 'vitest';

/**
 * The part of Playwright's `Locator` the test uses: Playwright's own in Chromium, a
 * puppeteer-backed one in Firefox (`puppeteer-page.ts`).
 */
export interface DemoLocator {
  first(): DemoLocator;
  last(): DemoLocator;
  locator(selector: string): DemoLocator;
  getByRole(role: 'button', options: { name: string }): DemoLocator;
  count(): Promise<number>;
  allTextContents(): Promise<string[]>;
  textContent(): Promise<string | null>;
  getAttribute(name: string, options?: { timeout?: number }): Promise<string | null>;
  inputValue(): Promise<string>;
  evaluate<R>(read: (element: HTMLElement) => R): Promise<R>;
  waitFor(options?: { timeout?: number }): Promise<void>;
  fill(value: string): Promise<void>;
  press(key: string): Promise<void>;
  click(): Promise<void>;
}

/** The part of Playwright's `Page` the test uses. */
export interface DemoPage {
  locator(selector: string): DemoLocator;
  evaluate<R>(read: () => R): Promise<R>;
  waitForFunction<A>(
    predicate: (argument: A) => boolean,
    argument: A,
    options: { timeout: number },
  ): Promise<unknown>;
  keyboard: { press(key: string): Promise<void> };
  screenshot(options: { path: string }): Promise<unknown>;
  goto(url: string): Promise<unknown>;
  waitForTimeout(ms: number): Promise<void>;
  /** Resizes the page's viewport (WebDriver: its window). */
  setViewportSize(size: { width: number; height: number }): Promise<void>;
}

/** Generous: CI machines are slow, and every wait ends as soon as its condition holds. */
export const WAIT_MS = 30_000;

/** The finished runs' footers in the log (stored turns have none). */
const FINISHED = '#log .run-footer[data-reason]';

/** How many runs have finished on the page so far. */
export function finishedRuns(page: DemoPage): Promise<number> {
  return page.locator(FINISHED).count();
}

/** Types `text` into the composer and sends it with Enter. */
export async function send(page: DemoPage, text: string): Promise<void> {
  await page.locator('#prompt').fill(text);
  await page.locator('#prompt').press('Enter');
}

/** Resolves once more than `before` runs have finished. */
export async function waitForRunEnd(page: DemoPage, before: number): Promise<void> {
  await page.waitForFunction(
    ({ selector, count }) => document.querySelectorAll(selector).length > count,
    { selector: FINISHED, count: before },
    { timeout: WAIT_MS },
  );
}

/** Sends `text` and waits for its run to finish; returns the footer's reason. */
export async function ask(page: DemoPage, text: string): Promise<string | null> {
  const before = await finishedRuns(page);
  await send(page, text);
  await waitForRunEnd(page, before);
  return page.locator(FINISHED).last().getAttribute('data-reason');
}

/** The text of the newest agent text bubble. */
export async function lastAnswer(page: DemoPage): Promise<string> {
  return (await page.locator('#log .turn.assistant .bubble').last().textContent()) ?? '';
}

/**
 * Starts recording the length of the newest agent bubble added from now on, at every
 * change of the log, so a test can tell text that streamed in from text that arrived at once.
 */
export async function recordAnswerLengths(page: DemoPage): Promise<void> {
  await page.evaluate(() => {
    const lengths: number[] = [];
    Object.assign(globalThis, { answerLengths: lengths });
    const log = document.getElementById('log');
    if (!log) throw new Error('The page has no #log.');
    // Only bubbles added from now on: the answers already in the log are not the one watched.
    const before = log.querySelectorAll('.turn.assistant .bubble').length;
    new MutationObserver(() => {
      const bubbles = log.querySelectorAll('.turn.assistant .bubble');
      if (bubbles.length <= before) return;
      const length = bubbles[bubbles.length - 1]?.textContent?.length ?? 0;
      if (length !== lengths.at(-1)) lengths.push(length);
    }).observe(log, { subtree: true, childList: true, characterData: true });
  });
}

/** The lengths recorded since {@link recordAnswerLengths}, one per change. */
export function answerLengths(page: DemoPage): Promise<number[]> {
  return page.evaluate(
    () => (globalThis as typeof globalThis & { answerLengths?: number[] }).answerLengths ?? [],
  );
}

/** Polls `read` until the assertion holds, for up to {@link WAIT_MS}. */
export function eventually<T>(read: () => Promise<T>) {
  return expect.poll(read, { timeout: WAIT_MS, interval: 50 });
}

/** An attribute of the first element `locator` finds, once there is one. */
export function attribute(locator: DemoLocator, name: string): Promise<string | null> {
  return locator.first().getAttribute(name, { timeout: WAIT_MS });
}

/** The text of every element `locator` finds. */
export function texts(locator: DemoLocator): Promise<string[]> {
  return locator.allTextContents();
}
