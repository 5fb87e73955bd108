/**
 * Issue #14, acceptance 1: the README's Quick start works as a reader meets it. A fresh
 * `npm create vite` app gets the packed tarball of this repo, zod, and the README's `file=`
 * blocks written over the template; its Vite dev server is driven in Chromium against the
 * fake model server of `airlock-agents/testing` (loaded from the tarball too). Then the
 * app type-checks with its own tsc and builds with `vite build`. Nothing is reused between
 * runs but npm's own cache: a broken export map or a missing dist file fails here.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumArgs, chromiumPath } from '../../scripts/chromium.mjs';
import type { ModelServer, ModelSession } from '../../src/testing';
import { readmeFiles } from './readme-files';

/** `npm create vite@9.3.0` runs create-vite 9.3.0: pinned, what `vite@latest` was when this was written. */
const CREATE_VITE = 'vite@9.3.0';
/** vite as the repo has it, typescript as the template asks (`~7.0.2`), zod as the package. */
const APP_PACKAGES = ['vite@8.3.8', 'typescript@7.0.2', 'zod@4.6.7'];

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOTS = join(REPO, 'test-results/example');
const WAIT_MS = 30_000;

const QUESTION = 'What time is it in Tokyo?';
const ANSWER = 'It is a little after eight in the evening in Tokyo.';

let workDir: string;
let appDir: string;
let models: ModelServer | undefined;
let session: ModelSession;
let vite: DevServer | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'airlock-example-'));
  mkdirSync(SCREENSHOTS, { recursive: true });
  appDir = join(workDir, 'app');
  // `prepack` builds dist/ first, so the tarball is what `npm publish` would upload.
  await run('npm', ['pack', '--pack-destination', workDir], REPO);
  const tarball = readdirSync(workDir).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack left no tarball in ${workDir}.`);

  await run(
    'npm',
    ['create', '--yes', CREATE_VITE, 'app', '--', '--template', 'vanilla-ts', '--no-interactive'],
    workDir,
  );
  for (const file of readmeFiles(readFileSync(join(REPO, 'README.md'), 'utf8'))) {
    mkdirSync(dirname(join(appDir, file.path)), { recursive: true });
    writeFileSync(join(appDir, file.path), file.content);
  }
  // Every entry of the export map, through its `types` condition, for the app's tsc.
  writeFileSync(join(appDir, 'src/entries.check.ts'), ENTRIES_CHECK);
  // The fake model server, through the `import` condition from the app's node_modules.
  writeFileSync(join(appDir, 'testing.mjs'), "export * from 'airlock-agents/testing';\n");
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--save-exact', join(workDir, tarball), ...APP_PACKAGES],
    appDir,
  );

  const testing = (await import(
    /* @vite-ignore */ pathToFileURL(join(appDir, 'testing.mjs')).href
  )) as typeof import('../../src/testing');
  models = await testing.startModelServer();
  session = models.createSession([
    { toolCalls: [{ name: 'get_time', arguments: { timeZone: 'Asia/Tokyo' } }] },
    // Slow enough that the page shows the answer at several lengths.
    { text: ANSWER, chunkDelayMs: 40 },
  ]);
  vite = await startDevServer(appDir, {
    OPENAI_API_KEY: 'sk-example-test',
    OPENAI_BASE_URL: session.baseURL,
  });
  browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await vite?.close();
  await models?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the Quick start as a fresh Vite app, installed from the packed tarball', () => {
  it('answers a typed question in the dev server: the page tool runs, the answer streams in, the page never reloads', async () => {
    if (!browser || !vite) throw new Error('The app did not start.');
    const page = await browser.newPage();
    try {
      const navigations = countNavigations(page);
      await page.addInitScript(recordAnswerLengths);
      await page.goto(vite.url);
      // Asked at once, as a quick user would: before the fix, Vite reloaded the page under this run.
      await page.locator('#question').fill(QUESTION);
      await page.locator('#send').click();
      await until(
        async () => navigations.count > 1 || (await answerText(page)) === ANSWER,
        async () => `the answer, or a reload. The page shows: ${await answerText(page)}`,
      );
      // A reload comes after the worker's imports reach Vite; watch a little past the answer.
      await page.waitForTimeout(1_000);
      await page.screenshot({ path: join(SCREENSHOTS, 'answer.png') });

      expect(navigations.count, `the page reloaded; Vite said:\n${vite.output()}`).toBe(1);
      expect(await answerText(page)).toBe(ANSWER);
      expect(await page.locator('#tools li').allTextContents()).toEqual([
        'get_time {"timeZone":"Asia/Tokyo"}',
      ]);
      const lengths = await page.evaluate(() => window.answerLengths ?? []);
      expect(lengths.length).toBeGreaterThanOrEqual(3);
      expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
      expect(lengths.at(-1)).toBe(ANSWER.length);
    } finally {
      await page.close();
    }
  });

  it("sent the model the page tool's result, from the browser's clock, in the request after the call", () => {
    expect(session.requests).toHaveLength(2);
    const [first, second] = session.requests.map((request) => chatMessages(request.body));
    expect(first?.at(-1)).toEqual({ role: 'user', content: QUESTION });
    expect(second?.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_0_0',
      content: expect.stringMatching(
        /status="ok">\n\d\d\/\d\d\/\d{4}, \d\d:\d\d:\d\d GMT\+09:00\n/,
      ),
    });
    // The key came from the dev server's environment, added by the proxy on the way.
    expect(session.requests[1]?.headers.authorization).toBe('Bearer sk-example-test');
  });

  it('loads every entry of the export map in plain Node, each with the named exports of its source', async () => {
    const script = `const names = {};
      for (const entry of ${JSON.stringify(Object.keys(SOURCES))}) names[entry] = Object.keys(await import(entry)).sort();
      console.log(JSON.stringify(names));`;
    const packed = JSON.parse(
      await run(process.execPath, ['--input-type=module', '-e', script], appDir),
    );

    const sources = Object.entries(SOURCES).map(async ([entry, load]) => [
      entry,
      Object.keys(await load()).sort(),
    ]);
    expect(packed).toEqual(Object.fromEntries(await Promise.all(sources)));
  });

  it("type-checks with the app's own tsc, every entry of the export map included", async () => {
    await run('npx', ['tsc', '--noEmit'], appDir);
  });

  it('builds for production with vite build, the agent worker as an asset of its own', async () => {
    // No key (userEnvironment passes no OPENAI_ variable): a build loads the config, but the
    // proxy is served by vite and vite preview only, and checks its options when they start.
    await run('npx', ['vite', 'build'], appDir);

    const assets = readdirSync(join(appDir, 'dist/assets'));
    expect(assets.some((name) => /^agent\.worker-.*\.js$/.test(name))).toBe(true);
    expect(readFileSync(join(appDir, 'dist/index.html'), 'utf8')).toContain(
      '<script type="module"',
    );
  });
});

/**
 * Every entry of the package's export map, and its source in this repository; but
 * `airlock-agents/otel`, which loads its peer `@opentelemetry/api` (not in this app).
 */
const SOURCES: Record<string, () => Promise<object>> = {
  'airlock-agents': () => import('../../src/index'),
  'airlock-agents/worker': () => import('../../src/worker'),
  'airlock-agents/sandbox': () => import('../../src/sandbox'),
  'airlock-agents/testing': () => import('../../src/testing'),
  'airlock-agents/testing/remote': () => import('../../src/testing-remote'),
  'airlock-agents/proxy': () => import('../../src/proxy'),
  // Its peer `ai` gives it types only: it loads without it.
  'airlock-agents/ai-sdk': () => import('../../src/ai-sdk'),
};

/** Uses a value or type of every entry, so tsc fails when one does not resolve. */
const ENTRIES_CHECK = `import { createAgent } from 'airlock-agents';
import { airlockProxy } from 'airlock-agents/proxy';
import { serveTools } from 'airlock-agents/sandbox';
import type { ModelServer } from 'airlock-agents/testing';
import type { ScriptedTurn } from 'airlock-agents/testing/remote';
import { serveAgent } from 'airlock-agents/worker';

export const entries = [createAgent, airlockProxy, serveTools, serveAgent];
export type Entries = [ModelServer, ScriptedTurn];
`;

declare global {
  interface Window {
    /** The answer's lengths as the page showed them, recorded by {@link recordAnswerLengths}. */
    answerLengths?: number[];
  }
}

/** Runs in the page before its scripts: notes each new length of `#answer`'s text. */
function recordAnswerLengths(): void {
  const lengths: number[] = [];
  window.answerLengths = lengths;
  new MutationObserver(() => {
    const length = document.querySelector('#answer')?.textContent?.length ?? 0;
    if (length > 0 && length !== lengths.at(-1)) lengths.push(length);
  }).observe(document, { childList: true, subtree: true, characterData: true });
}

/** Counts the page's top-level navigations: the first load, then one per reload. */
function countNavigations(page: Page): { count: number } {
  const navigations = { count: 0 };
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations.count += 1;
  });
  return navigations;
}

/** `#answer`'s text, or '' while the page is between documents. */
async function answerText(page: Page): Promise<string> {
  try {
    return (await page.locator('#answer').textContent({ timeout: 1_000 })) ?? '';
  } catch {
    return '';
  }
}

/** Polls `condition` until it holds; past {@link WAIT_MS}, throws saying `what` it waited for. */
async function until(
  condition: () => Promise<boolean>,
  what: () => string | Promise<string>,
): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Waited ${WAIT_MS} ms for ${await what()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function chatMessages(body: unknown): unknown[] {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? messages : [];
}

/**
 * The environment of the commands a user would run: this test runner's own variables
 * (NODE_ENV=test, npm's lifecycle settings) would change what npm installs and Vite serves.
 */
function userEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|VITEST|VITE_|NODE_ENV$|NODE_OPTIONS$|OPENAI_)/.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command to its end; rejects with its output when it fails. */
function run(
  command: string,
  args: readonly string[],
  cwd: string,
  extra: Record<string, string> = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: userEnvironment(extra) });
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

interface DevServer {
  readonly url: string;
  /** Everything the server printed so far. */
  output(): string;
  close(): Promise<void>;
}

/** `npx vite` in the app, as the README says, on a free port; resolves once it serves the page. */
async function startDevServer(cwd: string, extra: Record<string, string>): Promise<DevServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      'node_modules/vite/bin/vite.js',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--strictPort',
    ],
    { cwd, env: userEnvironment(extra) },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const server: DevServer = {
    url: `http://127.0.0.1:${port}/`,
    output: () => output,
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
  try {
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`Vite exited ${child.exitCode}:\n${output}`);
        return fetch(server.url).then(
          (response) => response.ok,
          () => false,
        );
      },
      () => `Vite to serve ${server.url}:\n${output}`,
    );
  } catch (error) {
    await server.close(); // Nobody else holds the process to end it.
    throw error;
  }
  return server;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}
