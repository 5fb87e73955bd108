// `npm run demo:screenshot`: redraws the README's demo image (docs/images/demo.png) from the
// demo as it is now. Builds the demo, serves it with its production server and the offline
// model (no key, whatever the environment holds), asks the first suggestion in Debian's
// Chromium through Playwright, and takes the 1280×800 screenshot once the run has finished.
// `node scripts/demo-screenshot.mjs <path.png>` writes elsewhere.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { build } from 'vite';
import { chromiumArgs, chromiumPath } from './browsers.mjs';
import { startDemoServer } from './demo-server.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const target = resolve(process.argv[2] ?? join(root, 'docs/images/demo.png'));
/** The README shows the demo at this size. */
const VIEWPORT = { width: 1280, height: 800 };
/** How long the page may take to start, and the run to finish, on a busy machine. */
const WAIT_MS = 120_000;
/** A finished run's footer in the log. */
const FINISHED = '#log .run-footer[data-reason]';

const outDir = mkdtempSync(join(tmpdir(), 'airlock-demo-screenshot-'));
/** @type {import('./demo-server.mjs').DemoServer | undefined} */
let server;
/** @type {import('playwright').Browser | undefined} */
let browser;
try {
  await build({
    configFile: join(root, 'demo/vite.config.ts'),
    build: { outDir, emptyOutDir: true },
    logLevel: 'warn',
  });
  // An empty environment: the offline model even where OPENAI_API_KEY is set.
  server = await startDemoServer({ root: outDir, port: 0, env: {} });
  browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  const page = await browser.newPage({ viewport: VIEWPORT });
  /** @type {string[]} */
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(server.url);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: WAIT_MS });
  // The first suggestion: a streamed answer with two sandboxed tool calls, as the README says.
  await page.locator('.suggestion').first().click({ timeout: WAIT_MS });
  await page.locator(FINISHED).first().waitFor({ timeout: WAIT_MS });
  const reason = await page.locator(FINISHED).first().getAttribute('data-reason');
  if (reason !== 'stop') throw new Error(`The demo's run ended "${reason}", not "stop".`);
  if (pageErrors.length > 0) throw new Error(`The page raised: ${pageErrors.join('; ')}`);
  await page.evaluate(() =>
    document.querySelector('#log')?.lastElementChild?.scrollIntoView({ block: 'end' }),
  );
  await page.screenshot({ path: target });
  console.log(`Wrote ${target}`);
} finally {
  await browser?.close();
  await server?.close();
  rmSync(outDir, { recursive: true, force: true });
}
