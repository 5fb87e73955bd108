/**
 * Live runs in every tab, end to end: two pages of one browser on a page served by Vite's
 * dev server (`tabs-page/`), each with its own agent worker on one database, in Chromium
 * (project `e2e`), Firefox (`e2e-firefox`) and WebKit (`e2e-webkit`), driven as
 * `tab-browser.ts` says. One page runs; the other watches, stops, approves; closing the
 * running page (the browser ends its agent worker, as a reload does) leaves the run
 * interrupted, and a page opened after it starts an agent on the same database.
 */
import { fileURLToPath } from 'node:url';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/index';
import { type ModelServer, startModelServer } from '../../src/testing';
import { airlockAliases } from '../../vite.config';
import { ENGINE } from './engine';
import { openTabBrowser, type TabBrowser, type TabPage } from './tab-browser';

const WAIT_MS = 30_000;
const STREAMED = 'one two three four five six seven eight nine ten';

let server: ViteDevServer | undefined;
let model: ModelServer | undefined;
let browser: TabBrowser | undefined;

/** Opens a page of the shared browser on the test page, its agent on `database`. */
async function openTab(baseURL: string, database: string): Promise<TabPage> {
  const page = await (browser as TabBrowser).open(
    `${server?.resolvedUrls?.local[0]}index.html`,
    WAIT_MS,
  );
  await page.call('start', [baseURL, database]);
  return page;
}

const ran = async (page: TabPage) => (await page.call('ran')) as AgentEvent[];
const watched = async (page: TabPage) => (await page.call('watched')) as AgentEvent[];
const toolRuns = async (page: TabPage) => (await page.call('toolRuns')) as number;
const ended = (events: readonly AgentEvent[]) =>
  events.some((event) => event.type === 'run-finish' || event.type === 'run-error');

/** Two tabs on a fresh database: one to run, one watching the conversation. */
async function twoTabs(baseURL: string) {
  const database = `e2e-${crypto.randomUUID()}`;
  const conversationId = crypto.randomUUID();
  const running = await openTab(baseURL, database);
  const watching = await openTab(baseURL, database);
  await watching.call('watch', [conversationId]);
  const run = async (input: string) =>
    (await running.call('run', [conversationId, input])) as string;
  return { running, watching, conversationId, database, run };
}

describe(`two pages of one browser (${ENGINE})`, () => {
  beforeAll(async () => {
    model = await startModelServer();
    server = await createServer({
      configFile: false,
      root: fileURLToPath(new URL('./tabs-page', import.meta.url)),
      resolve: { alias: airlockAliases },
      server: { host: '127.0.0.1', port: 0 },
      optimizeDeps: { include: ['comlink', 'openai', 'zod', 'zod/mini', 'dexie'] },
      worker: { format: 'es' },
      logLevel: 'warn',
    });
    await server.listen();
    browser = await openTabBrowser(ENGINE);
  });

  afterAll(async () => {
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
    expect(await toolRuns(running)).toBe(0);
    expect(await watching.call('approve', [request.approvalId])).toBe('ok');
    await expect.poll(async () => ended(await watched(watching)), { timeout: WAIT_MS }).toBe(true);
    await expect.poll(async () => ended(await ran(running)), { timeout: WAIT_MS }).toBe(true);

    expect(await watched(watching)).toEqual(await ran(running));
    expect((await ran(running)).at(-1)).toMatchObject({ type: 'run-finish', text: STREAMED });
    expect(await toolRuns(running)).toBe(1);
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

    expect(await watching.call('stop', [runId])).toBe('ok');
    await expect.poll(async () => ended(await ran(running)), { timeout: WAIT_MS }).toBe(true);
    await expect.poll(async () => ended(await watched(watching)), { timeout: WAIT_MS }).toBe(true);

    expect((await ran(running)).at(-1)).toMatchObject({ type: 'run-finish', reason: 'aborted' });
    expect(await watched(watching)).toEqual(await ran(running));
    await running.close();
    await watching.close();
  });

  it('closing the running page leaves the run interrupted, the watching page is told, and a page opened after it starts on the database', async () => {
    const session = (model as ModelServer).createSession([
      { text: STREAMED, chunkDelayMs: 10, fault: { kind: 'stall', afterChunks: 6 } },
    ]);
    const { running, watching, conversationId, database, run } = await twoTabs(session.baseURL);
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
    expect(await watching.call('runStatuses', [conversationId])).toEqual(['interrupted']);
    await watching.close();

    // A page opened after it, as after a reload, starts an agent on that database and reads it.
    const reopened = await openTab(session.baseURL, database);
    expect(await reopened.call('runStatuses', [conversationId])).toEqual(['interrupted']);
    await reopened.close();
  });
});
