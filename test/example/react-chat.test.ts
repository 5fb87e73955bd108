/**
 * The React example (`examples/react-chat/`): `useChat` over `AirlockChatTransport`, built
 * with Vite from this repository's sources (the package entries aliased to src/, React and
 * the AI SDK from the repository's node_modules: no registry, no tarball), type-checked
 * with its own tsconfig, served by `vite preview` with Airlock's proxy in front of the fake
 * model server, and driven in Chromium: streamed text, a tool card with its arguments, an
 * approval, stop, and a reload that keeps the conversation. The last screen is
 * docs/images/react-chat.png.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright';
import { build, type PreviewServer, preview } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumArgs, chromiumPath } from '../../scripts/chromium.mjs';
import { airlockProxy } from '../../src/proxy';
import { type ModelServer, type ModelSession, startModelServer } from '../../src/testing';
import { airlockAliases } from '../../vite.config';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = join(REPO, 'examples/react-chat');
const SCREENSHOT = join(REPO, 'docs/images/react-chat.png');
const WAIT_MS = 30_000;

const WEATHER = 'It is sunny and 21 °C in Paris today.';
const DELETED = 'Done: note n1 is deleted.';
const DELETED_AFTER_RELOAD = 'Done: note n2 is deleted too.';
const SLOW = 'one two three four five six seven eight nine ten eleven twelve thirteen';

let workDir: string;
let models: ModelServer | undefined;
let session: ModelSession;
let server: PreviewServer | undefined;
let browser: Browser | undefined;
let url: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'airlock-react-chat-'));
  const outDir = join(workDir, 'dist');
  await build({
    root: EXAMPLE,
    configFile: false,
    logLevel: 'warn',
    resolve: { alias: airlockAliases },
    oxc: { jsx: { runtime: 'automatic' } },
    build: { outDir, emptyOutDir: true },
    worker: { format: 'es' },
  });
  models = await startModelServer();
  session = models.createSession([
    // Arguments in many pieces, slowly, so the card shows them growing.
    {
      toolCalls: [{ id: 'call_weather', name: 'get_weather', arguments: { city: 'Paris' } }],
      argumentChunks: 6,
      chunkDelayMs: 60,
    },
    { text: WEATHER, chunkDelayMs: 30 },
    { toolCalls: [{ id: 'call_delete', name: 'delete_note', arguments: { id: 'n1' } }] },
    { text: DELETED, chunkDelayMs: 20 },
    { toolCalls: [{ id: 'call_delete_2', name: 'delete_note', arguments: { id: 'n2' } }] },
    { text: DELETED_AFTER_RELOAD, chunkDelayMs: 20 },
    { text: SLOW, chunkDelayMs: 400 },
  ]);
  server = await preview({
    root: EXAMPLE,
    configFile: false,
    logLevel: 'warn',
    build: { outDir },
    preview: { host: '127.0.0.1', port: 0 },
    plugins: [
      airlockProxy({
        upstream: session.baseURL,
        apiKey: 'sk-react-chat-test',
        allowedModels: ['gpt-4o-mini'],
        allowAnonymous: true,
      }),
    ],
  });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('The preview server has no port.');
  url = `http://127.0.0.1:${address.port}/`;
  browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await models?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the React example: useChat over AirlockChatTransport', () => {
  it('type-checks with its own tsconfig', async () => {
    // The example's tsconfig, with the package entries pointed at this repository's sources;
    // written under node_modules so types (vite/client, React's) resolve from there.
    mkdirSync(join(REPO, 'node_modules/.cache'), { recursive: true });
    const config = join(REPO, 'node_modules/.cache/react-chat.tsconfig.json');
    writeFileSync(
      config,
      JSON.stringify({
        extends: join(EXAMPLE, 'tsconfig.json'),
        compilerOptions: {
          paths: {
            'airlock-agents': [join(REPO, 'src/index.ts')],
            'airlock-agents/*': [join(REPO, 'src/*.ts')],
          },
          // The repository's sources are checked by its own, stricter, settings.
          noUnusedLocals: false,
        },
        include: [join(EXAMPLE, 'src')],
      }),
    );
    await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', config]);
  });

  it('streams an answer with a live tool card, takes an approval, stops, and keeps the chat over a reload', async () => {
    if (!browser) throw new Error('The browser did not start.');
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    try {
      await page.addInitScript(recordToolInputs);
      await page.goto(url);

      await ask(page, 'What is the weather in Paris?');
      await until(page, async () => (await lastAssistantText(page)) === WEATHER, 'the weather');
      const weather = page.locator('.tool-card[data-tool="get_weather"]');
      expect(await weather.getAttribute('data-state')).toBe('output-available');
      expect(await weather.locator('.output').textContent()).toContain('sunny');
      // The card showed the arguments while they streamed, before they were complete.
      const inputs = await page.evaluate(() => window.toolInputs ?? []);
      expect(inputs.length).toBeGreaterThanOrEqual(2);
      expect(inputs.at(-1)).toContain('Paris');

      await ask(page, 'Delete note n1');
      const approval = page.locator('.tool-card[data-tool="delete_note"]');
      await until(
        page,
        async () => (await approval.getAttribute('data-state')) === 'approval-requested',
        'the approval card',
      );
      expect(session.requests).toHaveLength(3);
      await approval.getByRole('button', { name: 'Approve' }).click();
      await until(page, async () => (await lastAssistantText(page)) === DELETED, 'the deletion');
      expect(await approval.getAttribute('data-state')).toBe('output-available');

      // A reload while a call waits for approval: the run is resumed and asks again.
      await ask(page, 'Delete note n2');
      const second = page.locator('.tool-card[data-tool="delete_note"]').nth(1);
      await until(
        page,
        async () => (await second.getAttribute('data-state')) === 'approval-requested',
        'the second approval card',
      );
      await page.reload();
      const resumed = page.locator('.message.assistant').last().locator('.tool-card');
      await until(
        page,
        async () => (await resumed.getAttribute('data-state')) === 'approval-requested',
        'the approval card after the reload',
      );
      expect(await resumed.locator('.input').textContent()).toContain('n2');
      await resumed.getByRole('button', { name: 'Approve' }).click();
      await until(
        page,
        async () => (await lastAssistantText(page)) === DELETED_AFTER_RELOAD,
        'the deletion after the reload',
      );

      await ask(page, 'Count slowly');
      // The count's own text: until its message appears, the last one is the deletion's.
      const counting = async () => {
        const text = await lastAssistantText(page);
        return text.length > 0 && SLOW.startsWith(text);
      };
      await until(page, counting, 'the count');
      await page.getByRole('button', { name: 'Stop' }).click();
      await until(page, async () => (await status(page)) === 'ready', 'the stop');
      const stopped = await lastAssistantText(page);
      expect(stopped.length).toBeGreaterThan(0);
      expect(SLOW.startsWith(stopped)).toBe(true);
      expect(stopped).not.toBe(SLOW);

      await page.reload();
      await until(
        page,
        async () => (await page.locator('.message').count()) >= 8,
        'the conversation after the reload',
      );
      const texts = await page.locator('.message .text').allTextContents();
      expect(texts).toEqual(
        expect.arrayContaining([
          'What is the weather in Paris?',
          WEATHER,
          'Delete note n1',
          DELETED,
          'Delete note n2',
          DELETED_AFTER_RELOAD,
        ]),
      );
      expect(
        await page
          .locator('.tool-card[data-tool="delete_note"]')
          .first()
          .getAttribute('data-state'),
      ).toBe('output-available');
      expect(await status(page)).toBe('ready');
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
    } finally {
      await page.close();
    }
  });

  it('sent the model only each new user message: the history came from IndexedDB', () => {
    const users = session.requests.map(
      (request) => chatMessages(request.body).filter((message) => message.role === 'user').length,
    );
    // Each request holds every user turn so far, each once: none was sent twice.
    expect(users).toEqual([1, 1, 2, 2, 3, 3, 4]);
  });
});

declare global {
  interface Window {
    /** Each text the weather card's input showed, recorded by {@link recordToolInputs}. */
    toolInputs?: string[];
  }
}

/** Runs in the page before its scripts: notes each new text of the weather card's input. */
function recordToolInputs(): void {
  const inputs: string[] = [];
  window.toolInputs = inputs;
  new MutationObserver(() => {
    const text = document.querySelector('.tool-card[data-tool="get_weather"] .input')?.textContent;
    if (text && text !== inputs.at(-1)) inputs.push(text);
  }).observe(document, { childList: true, subtree: true, characterData: true });
}

async function ask(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

async function lastAssistantText(page: Page): Promise<string> {
  const texts = await page.locator('.message.assistant').last().locator('.text').allTextContents();
  return texts.join('');
}

async function status(page: Page): Promise<string | null> {
  return page.locator('.status').getAttribute('data-status');
}

/** Polls `condition` until it holds; past {@link WAIT_MS}, throws saying what it waited for. */
async function until(page: Page, condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      const shown = await page
        .locator('main')
        .textContent()
        .catch(() => '');
      throw new Error(`Waited ${WAIT_MS} ms for ${what}. The page shows:\n${shown}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function chatMessages(body: unknown): { role?: unknown }[] {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? messages : [];
}

/** Runs a command to its end; rejects with its output when it fails. */
function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`\`${command} ${args.join(' ')}\` exited ${code}:\n${output}`));
    });
  });
}
