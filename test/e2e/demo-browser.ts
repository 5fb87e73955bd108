/** The browser the end-to-end test drives: Chromium through Playwright, Firefox through puppeteer-core. */
import { chromium } from 'playwright';
import { chromiumArgs, chromiumPath, firefoxPath } from '../../scripts/browsers.mjs';
import { type DemoPage, WAIT_MS } from './demo-page';
import { puppeteerDemoPage } from './puppeteer-page';

/** One browser with one page, and how to close both. */
export interface DemoBrowser {
  readonly page: DemoPage;
  close(): Promise<void>;
}

/** Options of {@link openDemoBrowser}. */
export interface DemoBrowserOptions {
  readonly viewport: { readonly width: number; readonly height: number };
  /** Called with the message of every uncaught error in the page. */
  readonly onPageError: (message: string) => void;
}

/** Launches the engine headless with one page of the given size. */
export async function openDemoBrowser(
  engine: 'chromium' | 'firefox',
  options: DemoBrowserOptions,
): Promise<DemoBrowser> {
  if (engine === 'chromium') {
    const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
    const context = await browser.newContext({ viewport: options.viewport });
    const page = await context.newPage();
    page.on('pageerror', (error) => options.onPageError(error.message));
    return {
      page,
      close: async () => {
        await context.close();
        await browser.close();
      },
    };
  }
  // Playwright drives only its own patched Firefox; stock Firefox speaks WebDriver BiDi.
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: firefoxPath,
    headless: true,
    protocolTimeout: 0,
  });
  const page = await browser.newPage();
  await page.setViewport({ ...options.viewport });
  page.on('pageerror', (error) => {
    const message = error instanceof Error ? error.message : String(error);
    // Over BiDi, Firefox's CSP reports (the headline tool's refused probe) arrive as
    // JavaScript log errors; they are not uncaught errors, which is what Playwright reports.
    if (!message.startsWith('Content-Security-Policy:')) options.onPageError(message);
  });
  return { page: puppeteerDemoPage(page, WAIT_MS), close: () => browser.close() };
}
