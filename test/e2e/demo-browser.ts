/**
 * The browser the end-to-end test drives: Chromium through Playwright, Firefox through
 * puppeteer-core, WebKitGTK through its WebDriver.
 */
import { WebkitSession } from '../../scripts/browsers/webkit-session.mjs';
import { webkitOptions } from '../../scripts/browsers.mjs';
import { type DemoPage, WAIT_MS } from './demo-page';
import { type Engine, launchChromium, launchFirefox } from './engine';
import { puppeteerDemoPage } from './puppeteer-page';
import { webdriverDemoPage } from './webdriver-page';

/** One browser with one page, and how to close both. */
export interface DemoBrowser {
  readonly page: DemoPage;
  /** The messages of the uncaught errors in the page so far. */
  pageErrors(): Promise<string[]>;
  close(): Promise<void>;
}

/** Options of {@link openDemoBrowser}. */
export interface DemoBrowserOptions {
  readonly viewport: { readonly width: number; readonly height: number };
}

/** Launches the engine headless with one page of the given size. */
export async function openDemoBrowser(
  engine: Engine,
  options: DemoBrowserOptions,
): Promise<DemoBrowser> {
  const errors: string[] = [];
  if (engine === 'webkit') return openWebkit(options);
  if (engine === 'chromium') {
    const browser = await launchChromium();
    const context = await browser.newContext({ viewport: options.viewport });
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    return {
      page,
      pageErrors: async () => errors,
      close: async () => {
        await context.close();
        await browser.close();
      },
    };
  }
  const browser = await launchFirefox();
  const page = await browser.newPage();
  await page.setViewport({ ...options.viewport });
  page.on('pageerror', (error) => {
    const message = error instanceof Error ? error.message : String(error);
    // Over BiDi, Firefox's CSP reports (the headline tool's refused probe) arrive as
    // JavaScript log errors; they are not uncaught errors, which is what Playwright reports.
    if (!message.startsWith('Content-Security-Policy:')) errors.push(message);
  });
  return {
    page: puppeteerDemoPage(page, WAIT_MS),
    pageErrors: async () => errors,
    close: () => browser.close(),
  };
}

/**
 * WebKitGTK's MiniBrowser over classic WebDriver, which has no error events: a listener
 * put in the page after each navigation collects them (errors before it are missed).
 */
async function openWebkit(options: DemoBrowserOptions): Promise<DemoBrowser> {
  const session = await WebkitSession.start(webkitOptions);
  const errors: string[] = [];
  const execute = (script: string) =>
    session.command('POST', `/session/${session.id}/execute/sync`, { script, args: [] });
  const collect = async () => {
    const found = (await execute('return globalThis.__airlockErrors ?? [];')) as string[];
    errors.push(...found);
    await execute('globalThis.__airlockErrors = [];');
  };
  const listen = () =>
    execute(`globalThis.__airlockErrors = [];
      addEventListener('error', (event) => globalThis.__airlockErrors.push(String(event.message)));
      addEventListener('unhandledrejection', (event) => globalThis.__airlockErrors.push(String(event.reason)));`);
  await session.command('POST', `/session/${session.id}/window/rect`, { ...options.viewport });
  const page = webdriverDemoPage(session, WAIT_MS);
  return {
    page: {
      ...page,
      goto: async (url) => {
        await collect().catch(() => undefined);
        await page.goto(url);
        await listen();
      },
    },
    pageErrors: async () => {
      await collect();
      return errors;
    },
    close: () => session.close(),
  };
}
