/**
 * The part of Playwright's `Page` and `Locator` that the end-to-end test uses, over
 * classic WebDriver, so the same flows run in WebKitGTK's MiniBrowser, which neither
 * Playwright nor puppeteer drives. Locators are chains of steps resolved in the page, as in
 * `puppeteer-page.ts`, both built on `step-locator.ts`.
 */
import { writeFileSync } from 'node:fs';
import type { WebkitSession } from '../../scripts/browsers/webkit-session.mjs';
import type { DemoPage } from './demo-page';
import { installResolver, type Step, StepLocator } from './step-locator';

/** WebDriver's key codes for the keys the test presses. */
const KEYS: Readonly<Record<string, string>> = { Enter: '\uE007', Escape: '\uE00C' };

/** A WebDriver element reference, as scripts return and take them. */
type ElementReference = Record<string, string>;

const RESOLVE = `(${installResolver.toString()})(); return globalThis.__airlockResolve(arguments[0])`;

/** Wraps a WebDriver session; `waitMs` bounds every wait for an element. */
export function webdriverDemoPage(session: WebkitSession, waitMs: number): DemoPage {
  const run = (script: string, ...args: unknown[]) =>
    session.command('POST', `/session/${session.id}/execute/sync`, { script, args });
  return {
    locator: (selector) => new WebdriverLocator(session, [{ kind: 'css', selector }], waitMs),
    evaluate: async (read) => (await run(`return (${read.toString()})();`)) as never,
    waitForFunction: async (predicate, argument, options) => {
      const script = `return (${predicate.toString()})(arguments[0]);`;
      await poll(async () => (await run(script, argument)) === true || null, options.timeout);
    },
    keyboard: {
      press: async (key) => {
        const value = KEYS[key] ?? key;
        await session.command('POST', `/session/${session.id}/actions`, {
          actions: [
            {
              type: 'key',
              id: 'keyboard',
              actions: [
                { type: 'keyDown', value },
                { type: 'keyUp', value },
              ],
            },
          ],
        });
      },
    },
    screenshot: async (options) => {
      const png = (await session.command('GET', `/session/${session.id}/screenshot`)) as string;
      writeFileSync(options.path, Buffer.from(png, 'base64'));
    },
    setViewportSize: async (size) => {
      await session.command('POST', `/session/${session.id}/window/rect`, { ...size });
    },
    goto: (url) => session.navigate(url),
    waitForTimeout: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}

class WebdriverLocator extends StepLocator {
  readonly #session: WebkitSession;
  readonly #steps: readonly Step[];
  readonly #waitMs: number;

  constructor(session: WebkitSession, steps: readonly Step[], waitMs: number) {
    super();
    this.#session = session;
    this.#steps = steps;
    this.#waitMs = waitMs;
  }

  protected withStep(step: Step): WebdriverLocator {
    return new WebdriverLocator(this.#session, [...this.#steps, step], this.#waitMs);
  }

  #run(script: string, ...args: unknown[]): Promise<unknown> {
    return this.#session.command('POST', `/session/${this.#session.id}/execute/sync`, {
      script,
      args,
    });
  }

  async count(): Promise<number> {
    return (await this.#run(`${RESOLVE}.length;`, this.#steps)) as number;
  }

  async allTextContents(): Promise<string[]> {
    return (await this.#run(
      `${RESOLVE}.map((element) => element.textContent ?? '');`,
      this.#steps,
    )) as string[];
  }

  async textContent(): Promise<string | null> {
    return this.#read('return arguments[0].textContent;');
  }

  async getAttribute(name: string): Promise<string | null> {
    return this.#read('return arguments[0].getAttribute(arguments[1]);', name);
  }

  async inputValue(): Promise<string> {
    return this.#read('return arguments[0].value;');
  }

  evaluate<R>(read: (element: HTMLElement) => R): Promise<R> {
    return this.#read(`return (${read.toString()})(arguments[0]);`);
  }

  async waitFor(options: { timeout?: number } = {}): Promise<void> {
    await this.#element(options.timeout);
  }

  async fill(value: string): Promise<void> {
    // As Playwright's fill: wait until editable, focus, replace the value, and tell the
    // page with an input event.
    await this.#element(this.#waitMs, true);
    await this.#read(
      `const field = arguments[0]; field.focus(); field.value = arguments[1];
       field.dispatchEvent(new Event('input', { bubbles: true }));`,
      value,
    );
  }

  async press(key: string): Promise<void> {
    const element = await this.#element(this.#waitMs, true);
    await this.#session.command(
      'POST',
      `/session/${this.#session.id}/element/${elementId(element)}/value`,
      { text: KEYS[key] ?? key },
    );
  }

  async click(): Promise<void> {
    const element = await this.#element(this.#waitMs, true);
    await this.#session.command(
      'POST',
      `/session/${this.#session.id}/element/${elementId(element)}/click`,
      {},
    );
  }

  /** Runs `script` with the element (`arguments[0]`) once it exists, and `argument`. */
  async #read<R>(script: string, argument?: unknown): Promise<R> {
    const element = await this.#element();
    return (await this.#run(script, element, argument)) as R;
  }

  /**
   * The one element the chain finds, waiting for it up to `timeout` ms; with `enabled`,
   * also until it is not disabled, as Playwright waits before it acts on an element.
   */
  #element(timeout = this.#waitMs, enabled = false): Promise<ElementReference> {
    const find = enabled
      ? `(${installResolver.toString()})();
         const found = globalThis.__airlockResolve(arguments[0])[0];
         return found && !found.matches(':disabled') ? found : null;`
      : `${RESOLVE}[0] ?? null;`;
    return poll(async () => (await this.#run(find, this.#steps)) as ElementReference, timeout);
  }
}

function elementId(element: ElementReference): string {
  const id = Object.values(element)[0];
  if (!id) throw new Error(`Not a WebDriver element reference: ${JSON.stringify(element)}`);
  return id;
}

/** Calls `read` every 50 ms until it gives something other than null. */
async function poll<T>(read: () => Promise<T | null>, timeout: number): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await read();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeout} ms.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
