/**
 * The part of Playwright's `Page` and `Locator` that the end-to-end test uses, over
 * puppeteer-core, so the same flows run in stock Firefox (over WebDriver BiDi), which
 * Playwright cannot drive. Locators are lazy, as Playwright's: a chain of steps resolved
 * in the page on every use; actions and reads of one element wait for it to exist.
 */
import type { ElementHandle, Page } from 'puppeteer-core';
import type { DemoPage } from './demo-page';
import { installResolver, type ResolverGlobal, type Step, StepLocator } from './step-locator';

/** Wraps a puppeteer page; `waitMs` bounds every wait for an element. */
export function puppeteerDemoPage(page: Page, waitMs: number): DemoPage {
  return {
    locator: (selector) => new PuppeteerLocator(page, [{ kind: 'css', selector }], waitMs),
    evaluate: (read) => page.evaluate(read),
    waitForFunction: async (predicate, argument, options) => {
      await page.waitForFunction(
        predicate as (argument: unknown) => boolean,
        { timeout: options.timeout, polling: 50 },
        argument,
      );
    },
    keyboard: {
      press: (key) => page.keyboard.press(key as Parameters<Page['keyboard']['press']>[0]),
    },
    screenshot: (options) => page.screenshot({ path: options.path as `${string}.png` }),
    setViewportSize: (size) => page.setViewport(size),
    goto: (url) => page.goto(url),
    waitForTimeout: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}

class PuppeteerLocator extends StepLocator {
  readonly #page: Page;
  readonly #steps: readonly Step[];
  readonly #waitMs: number;

  constructor(page: Page, steps: readonly Step[], waitMs: number) {
    super();
    this.#page = page;
    this.#steps = steps;
    this.#waitMs = waitMs;
  }

  protected withStep(step: Step): PuppeteerLocator {
    return new PuppeteerLocator(this.#page, [...this.#steps, step], this.#waitMs);
  }

  count(): Promise<number> {
    return this.#page.evaluate(
      (steps) => (globalThis as unknown as ResolverGlobal).__airlockResolve(steps).length,
      this.#steps,
    );
  }

  allTextContents(): Promise<string[]> {
    return this.#page.evaluate(
      (steps) =>
        (globalThis as unknown as ResolverGlobal)
          .__airlockResolve(steps)
          .map((element) => element.textContent ?? ''),
      this.#steps,
    );
  }

  async textContent(): Promise<string | null> {
    return this.#read((element) => element.textContent);
  }

  async getAttribute(name: string): Promise<string | null> {
    return this.#read((element, attribute) => element.getAttribute(attribute), name);
  }

  async inputValue(): Promise<string> {
    return this.#read((element) => (element as HTMLInputElement).value);
  }

  evaluate<R>(read: (element: HTMLElement) => R): Promise<R> {
    // Passed on as it is: puppeteer sends the function's source to the page, not a closure.
    return this.#read(read as (element: Element) => R);
  }

  async waitFor(options: { timeout?: number } = {}): Promise<void> {
    await (await this.#element(options.timeout)).dispose();
  }

  async fill(value: string): Promise<void> {
    // As Playwright's fill: wait until editable, focus, replace the value, and tell the
    // page with an input event.
    await (await this.#element(this.#waitMs, true)).dispose();
    await this.#read((element, text) => {
      const field = element as HTMLInputElement | HTMLTextAreaElement;
      field.focus();
      field.value = text;
      field.dispatchEvent(new Event('input', { bubbles: true }));
    }, value);
  }

  async press(key: string): Promise<void> {
    const element = await this.#element(this.#waitMs, true);
    try {
      await element.press(key as Parameters<ElementHandle['press']>[0]);
    } finally {
      await element.dispose();
    }
  }

  async click(): Promise<void> {
    const element = await this.#element(this.#waitMs, true);
    try {
      await element.click();
    } finally {
      await element.dispose();
    }
  }

  /** Runs `read` on the element once it exists. */
  async #read<R, A = undefined>(read: (element: Element, argument: A) => R, argument?: A) {
    const element = await this.#element();
    try {
      return (await element.evaluate(
        read as (element: Element, argument: unknown) => R,
        argument,
      )) as R;
    } finally {
      await element.dispose();
    }
  }

  /**
   * The one element the chain finds, waiting for it up to `timeout` ms; with `enabled`,
   * also until it is not disabled, as Playwright waits before it acts on an element.
   */
  async #element(timeout = this.#waitMs, enabled = false): Promise<ElementHandle<Element>> {
    await this.#page.evaluate(installResolver);
    const handle = await this.#page.waitForFunction(
      (steps, mustBeEnabled) => {
        const found = (globalThis as unknown as ResolverGlobal).__airlockResolve(steps)[0];
        if (!found) return null;
        return mustBeEnabled && found.matches(':disabled') ? null : found;
      },
      { timeout, polling: 50 },
      this.#steps,
      enabled,
    );
    return handle as ElementHandle<Element>;
  }
}
