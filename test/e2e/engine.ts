/**
 * The engine an end-to-end project drives, where its screenshots go, and how the Chromium and
 * Firefox of the e2e files are launched (WebKitGTK is a `WebkitSession` of its own).
 */
import type { Browser as PlaywrightBrowser } from 'playwright';
import { chromium } from 'playwright';
import type { Browser as PuppeteerBrowser } from 'puppeteer-core';
import {
  chromiumArgs,
  chromiumPath,
  firefoxLaunchOptions,
  firefoxPath,
} from '../../scripts/browsers.mjs';

/** The engines the e2e projects run in. */
export type Engine = 'chromium' | 'firefox' | 'webkit';

/** `AIRLOCK_E2E_BROWSER` of the project (`e2e-firefox`, `e2e-webkit`); Chromium for `e2e`. */
export const ENGINE: Engine =
  (['firefox', 'webkit'] as const).find((engine) => engine === process.env.AIRLOCK_E2E_BROWSER) ??
  'chromium';

/** test-results/e2e/ for Chromium, test-results/e2e-<engine>/ for the others. */
export const SCREENSHOTS =
  ENGINE === 'chromium' ? 'test-results/e2e' : `test-results/e2e-${ENGINE}`;

/** Debian's Chromium, headless, through Playwright. */
export function launchChromium(): Promise<PlaywrightBrowser> {
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
}

/**
 * Debian's Firefox ESR, headless, through puppeteer-core over WebDriver BiDi: Playwright drives
 * only its own patched Firefox.
 */
export async function launchFirefox(): Promise<PuppeteerBrowser> {
  const { default: puppeteer } = await import('puppeteer-core');
  return puppeteer.launch({
    browser: 'firefox',
    executablePath: firefoxPath,
    headless: true,
    protocolTimeout: 0,
    ...firefoxLaunchOptions,
  });
}
