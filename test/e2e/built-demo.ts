/**
 * The demo as the end-to-end files drive it: built for production into a temporary folder,
 * served by the demo server with the offline model, and open in {@link ENGINE} at the size
 * asked for, ready.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type InlineConfig } from 'vite';
import { afterAll, beforeAll } from 'vitest';
import { type DemoServer, startDemoServer } from '../../scripts/demo-server.mjs';
import { type DemoBrowser, openDemoBrowser } from './demo-browser';
import { type DemoPage, WAIT_MS } from './demo-page';
import { ENGINE, SCREENSHOTS } from './engine';

/** Options of {@link useBuiltDemo}. */
export interface BuiltDemoOptions {
  /** Start of the temporary build folder's name, e.g. `airlock-demo-`. */
  readonly prefix: string;
  readonly viewport: { readonly width: number; readonly height: number };
  /** Vite's `worker` build options, when the file needs the workers bundled another way. */
  readonly worker?: InlineConfig['worker'];
}

/** What {@link useBuiltDemo} gives a test file, once its `beforeAll` has run. */
export interface BuiltDemo {
  /** The build's folder, which another server may serve too. */
  readonly outDir: string;
  readonly server: DemoServer;
  readonly browser: DemoBrowser;
  /** The browser's page, on the server's URL with the demo ready. */
  readonly page: DemoPage;
}

/**
 * Builds, serves and opens the demo in `beforeAll` (and makes {@link SCREENSHOTS}); closes the
 * browser and the server and removes the build in `afterAll`.
 */
export function useBuiltDemo(options: BuiltDemoOptions): BuiltDemo {
  let outDir: string | undefined;
  let server: DemoServer | undefined;
  let browser: DemoBrowser | undefined;
  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), options.prefix));
    mkdirSync(SCREENSHOTS, { recursive: true });
    await build({
      configFile: fileURLToPath(new URL('../../demo/vite.config.ts', import.meta.url)),
      build: { outDir, emptyOutDir: true },
      ...(options.worker ? { worker: options.worker } : {}),
      logLevel: 'warn',
    });
    // An empty environment: the offline model even where OPENAI_API_KEY is set.
    server = await startDemoServer({ root: outDir, port: 0, env: {} });
    browser = await openDemoBrowser(ENGINE, { viewport: options.viewport });
    await browser.page.goto(server.url);
    await browser.page.locator('body[data-ready="true"]').waitFor({ timeout: WAIT_MS });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('The demo is built, served and opened in beforeAll.');
    return value;
  };
  return {
    get outDir() {
      return started(outDir);
    },
    get server() {
      return started(server);
    },
    get browser() {
      return started(browser);
    },
    get page() {
      return started(browser).page;
    },
  };
}
