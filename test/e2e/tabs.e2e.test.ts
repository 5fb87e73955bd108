/**
 * Live runs in every tab, end to end: two pages of one browser context (Playwright,
 * Chromium) on a page served by Vite's dev server (`tabs-page/`), each with its own agent
 * worker on one database. One page runs; the other watches, stops, approves; closing the
 * running page leaves the run interrupted. Playwright drives Chromium only here: the
 * Firefox and WebKit projects run the same relay in `test/browser/tabs.test.ts`.
 */
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumArgs, chromiumPath } from '../../scripts/browsers.mjs';
import type { AgentEvent } from '../../src/index';
import { type ModelServer, startModelServer } from '../../src/testing';
import { airlockAliases } from '../../vite.config';

const ENGINE = process.env.AIRLOCK_E2E_BROWSER ?? 'chromium';
const WAIT_MS = 30_000;
const STREAMED = 'one two three four five six seven eight nine ten';

let server: ViteDevServer | undefined;
let model: ModelServer | undefined;
let browser: Browser | undefined;
let context: BrowserContext;

/** What `tabs-page/main.ts` puts on the page. */
interface TabsPage {
  ran: AgentEvent[];
  watched: AgentEvent[];
  toolRuns: number;
  start(baseURL: string, database: string): Promise<void>;
  run(conversationId: string, input: string): string;
  watch(conversationId: string): Promise<void>;
  stop(runId: string): Promise<string>;
  approve(approvalId: string): Promise<string>;
  runStatuses(conversationId: string): Promise<string[]>;
}

type Tabs = { tabs: TabsPage };

/** Opens a page of the shared context on the test page, its agent on `database`. */
async function openTab(baseURL: string, database: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${server?.resolvedUrls?.local[0]}index.html`);
  await page.waitForFunction(() => 'tabs' in globalThis, undefined, { timeout: WAIT_MS });
  await page.evaluate(([url, db]) => (globalThis as unknown as Tabs).tabs.start(url, db), [
    baseURL,
    database,
  ] as const);
  return page;
}

const ran = (page: Page) => page.evaluate(() => (globalThis as unknown as Tabs).tabs.ran);
const watched = (page: Page) => page.evaluate(() => (globalThis as unknown as Tabs).tabs.watched);
const ended = (events: readonly AgentEvent[]) =>
  events.some((event) => event.type === 'run-finish' || event.type === 'run-error');

/** Two tabs on a fresh database: one to run, one watching the conversation. */
async function twoTabs(baseURL: string) {
  const database = `e2e-${crypto.randomUUID()}`;
  const conversationId = crypto.randomUUID();
  const running = await openTab(baseURL, database);
  const watching = await openTab(baseURL, database);
  await watching.evaluate((id) => (globalThis as unknown as Tabs).tabs.watch(id), conversationId);
  const run = (input: string) =>
    running.evaluate(([id, text]) => (globalThis as unknown as Tabs).tabs.run(id, text), [
      conversationId,
      input,
    ] as const);
  return { running, watching, conversationId, run };
}

describe.runIf(ENGINE === 'chromium')('two pages of one browser context', () => {
  beforeAll(async () => {
    model = await startModelServer();
    server = await createServer({
      configFile: false,
      root: fileURLToPath(new URL('./tabs-page', import.meta.url)),
      resolve: { alias: airlockAliases },
      server: { host: '127.0.0.1', port: 0 },
      optimizeDeps: { include: ['comlink', 'openai', 'zod', 'dexie'] },
      worker: { format: 'es' },
      logLevel: 'warn',
    });
    await server.listen();
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
    context = await browser.newContext();
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
    await model?.close();
  });

  it('shows the watching page every event in order, and its approval runs the tool once', async () => {
    const session = (model as ModelServer).createSession([
      { toolCalls: [{ id: 'call_del', name: 'delete_note', arguments: { id: 'n1' } }] },
      { text: STREAMED, chunkDelayMs: 10 },
    ]);
    const { running, watching, run } = await twoTabs(session.baseURL);
    await run('Delete note n1');

    await expect
      .poll(async () => (await watched(watching)).find((e) => e.type === 'approval-request'), {
        timeout: WAIT_MS,
      })
      .toBeDefined();
    const request = (await watched(watching)).find((e) => e.type === 'approval-request');
    if (request?.type !== 'approval-request') throw new Error('no approval request');
    expect(await running.evaluate(() => (globalThis as unknown as Tabs).tabs.toolRuns)).toBe(0);
    expect(
      await watching.evaluate(
        (id) => (globalThis as unknown as Tabs).tabs.approve(id),
        request.approvalId,
      ),
    ).toBe('ok');
    await expect.poll(async () => ended(await watched(watching)), { timeout: WAIT_MS }).toBe(true);
    await expect.poll(async () => ended(await ran(running)), { timeout: WAIT_MS }).toBe(true);

    expect(await watched(watching)).toEqual(await ran(running));
    expect((await ran(running)).at(-1)).toMatchObject({ type: 'run-finish', text: STREAMED });
    expect(await running.evaluate(() => (globalThis as unknown as Tabs).tabs.toolRuns)).toBe(1);
    await running.close();
    await watching.close();
  });

  it('stops the run from the watching page', async () => {
    const session = (model as ModelServer).createSession([
      { text: STREAMED.repeat(40), chunkDelayMs: 40 },
    ]);
    const { running, watching, run } = await twoTabs(session.baseURL);
    const runId = await run('Talk');
    await expect
      .poll(async () => (await watched(watching)).some((e) => e.type === 'text-delta'), {
        timeout: WAIT_MS,
      })
      .toBe(true);

    expect(
      await watching.evaluate((id) => (globalThis as unknown as Tabs).tabs.stop(id), runId),
    ).toBe('ok');
    await expect.poll(async () => ended(await ran(running)), { timeout: WAIT_MS }).toBe(true);
    await expect.poll(async () => ended(await watched(watching)), { timeout: WAIT_MS }).toBe(true);

    expect((await ran(running)).at(-1)).toMatchObject({ type: 'run-finish', reason: 'aborted' });
    expect(await watched(watching)).toEqual(await ran(running));
    await running.close();
    await watching.close();
  });

  it('closing the running page leaves the run interrupted, and the watching page is told', async () => {
    const session = (model as ModelServer).createSession([
      { text: STREAMED, chunkDelayMs: 10, fault: { kind: 'stall', afterChunks: 6 } },
    ]);
    const { running, watching, conversationId, run } = await twoTabs(session.baseURL);
    const runId = await run('Talk');
    await expect
      .poll(async () => (await watched(watching)).some((e) => e.type === 'text-delta'), {
        timeout: WAIT_MS,
      })
      .toBe(true);

    await running.close();
    await expect.poll(async () => ended(await watched(watching)), { timeout: WAIT_MS }).toBe(true);

    expect((await watched(watching)).at(-1)).toMatchObject({
      type: 'run-error',
      runId,
      error: { code: 'run-interrupted', details: { runId, status: 'interrupted' } },
    });
    expect(
      await watching.evaluate(
        (id) => (globalThis as unknown as Tabs).tabs.runStatuses(id),
        conversationId,
      ),
    ).toEqual(['interrupted']);
    await watching.close();
  });
});
