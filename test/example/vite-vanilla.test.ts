/**
 * Issue #14, acceptance 1: the README's Quick start works as a reader meets it. A fresh
 * `npm create vite` app gets the packed tarball of this repo, zod, and the README's `file=`
 * blocks written over the template; its Vite dev server is driven in Chromium against the
 * fake model server of `airlock-agents/testing` (loaded from the tarball too). Then the
 * app type-checks with its own tsc and builds with `vite build`. Nothing is reused between
 * runs but npm's own cache: a broken export map or a missing dist file fails here.
 *
 * Issue #48: the build's agent worker is the size the README gives, and the built app runs
 * when served as docs/deployment.md says: its `serve-built-app.mjs` block, written into the
 * app, serves `dist/` beside the proxy, and Chromium runs a conversation under its policy,
 * for the Quick start and for the Quick start with an iframe-tier toolset.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type Browser, chromium, type Page } from 'playwright';
import { parseSync } from 'vite';
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
  // The production server's parts, as docs/deployment.md has them: its proxy and its module.
  writeFileSync(join(appDir, 'proxy.mjs'), "export * from 'airlock-agents/proxy';\n");
  for (const file of readmeFiles(readFileSync(join(REPO, 'docs/deployment.md'), 'utf8'))) {
    writeFileSync(join(appDir, file.path), file.content);
  }
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

  it('builds an agent worker within 5 % of the size the README gives at start, the rest in chunks loaded on use', () => {
    const advertised = /the agent worker starts on ([\d.]+) KB gzip/.exec(
      readFileSync(join(REPO, 'README.md'), 'utf8'),
    )?.[1];
    expect(advertised, 'the README gives the agent worker’s size').toBeDefined();

    const worker = workerBundle(join(appDir, 'dist/assets'));
    const startKB = worker.startGzipBytes / 1024;
    expect(
      Math.abs(startKB - Number(advertised)) / Number(advertised),
      `the agent worker loads ${startKB.toFixed(1)} KB gzip at start (${worker.start.join(', ')}); the README says ${advertised} KB`,
    ).toBeLessThanOrEqual(0.05);
    // MCP, knowledge and the rest are chunks of their own, not inlined into the worker.
    expect(worker.lazy.length).toBeGreaterThan(0);
  });
});

describe('the built Quick start, served as docs/deployment.md says', () => {
  let app: AppServer | undefined;
  let production: ModelSession;

  beforeAll(async () => {
    production = requireModels().createSession([
      { toolCalls: [{ name: 'get_time', arguments: { timeZone: 'Asia/Tokyo' } }] },
      { text: ANSWER, chunkDelayMs: 20 },
    ]);
    app = await startAppServer(join(appDir, 'dist'), production.baseURL, {});
  });

  afterAll(async () => {
    await app?.close();
  });

  it('sends the policy with the page and the worker script, JavaScript as JavaScript, hashed assets cached for good', async () => {
    if (!app) throw new Error('The app server did not start.');
    const policy = await app.policy();
    const worker = readdirSync(join(appDir, 'dist/assets')).find((name) =>
      /^agent\.worker-.*\.js$/.test(name),
    );

    const page = await fetch(app.url);
    expect(page.headers.get('content-security-policy')).toBe(policy);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const script = await fetch(new URL(`assets/${worker}`, app.url));
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('x-content-type-options')).toBe('nosniff');
    expect(script.headers.get('content-security-policy')).toBe(policy);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // Without an iframe toolset, no asset is readable from another origin.
    expect(script.headers.get('access-control-allow-origin')).toBeNull();
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toContain('unsafe-');
  });

  it('answers a question in Chromium under that policy: the worker reaches the proxy and the page tool runs', async () => {
    if (!browser || !app) throw new Error('The app did not start.');
    const page = await browser.newPage();
    try {
      const violations = await recordViolations(page);
      await page.goto(app.url);
      await page.locator('#question').fill(QUESTION);
      await page.locator('#send').click();
      await until(
        async () => (await answerText(page)) === ANSWER,
        async () => `the answer under the policy. The page shows: ${await answerText(page)}`,
      );
      await page.screenshot({ path: join(SCREENSHOTS, 'production.png') });

      expect(await page.locator('#tools li').allTextContents()).toEqual([
        'get_time {"timeZone":"Asia/Tokyo"}',
      ]);
      expect(production.requests).toHaveLength(2);
      expect(production.requests[1]?.headers.authorization).toBe('Bearer sk-production-test');
      expect(blockedLoads(violations())).toEqual([]);

      // The policy is in force: the page cannot reach the model server but through the proxy.
      const direct = new URL(production.baseURL).origin;
      await page.evaluate((url) => fetch(url).catch(() => undefined), `${direct}/`);
      await until(
        async () => violations().some((violation) => violation.includes(`connect-src ${direct}`)),
        () => `a connect-src violation for ${direct}; seen: ${violations().join('\n')}`,
      );
    } finally {
      await page.close();
    }
  });

  it('refuses paths that climb out of dist/, malformed escapes, NUL bytes and other methods', async () => {
    if (!app) throw new Error('The app server did not start.');
    for (const path of [
      '/../package.json',
      '/assets/..%2f..%2fpackage.json',
      '/%2e%2e%2f%2e%2e%2fpackage.json',
      '/..%5c..%5cpackage.json',
      '/%E0%A4%A',
      '/index.html%00.js',
      '/assets',
    ]) {
      const answer = await rawRequest(app.url, 'GET', path);
      expect([path, answer.status, answer.body]).toEqual([path, 404, 'Not found']);
    }
    const post = await rawRequest(app.url, 'POST', '/index.html');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describe('the built Quick start with an iframe-tier toolset, served with the iframe tier’s headers', () => {
  const SANDBOX_ANSWER = 'The sandboxed tool ran in an opaque origin.';
  let app: AppServer | undefined;
  let sandboxed: ModelSession;

  beforeAll(async () => {
    for (const [path, content] of Object.entries(IFRAME_APP)) {
      writeFileSync(join(appDir, path), content);
    }
    await run('npx', ['vite', 'build', '--config', 'vite.sandboxed.config.ts'], appDir);
    sandboxed = requireModels().createSession([
      { toolCalls: [{ name: 'where_am_i', arguments: {} }] },
      { text: SANDBOX_ANSWER },
    ]);
    app = await startAppServer(join(appDir, 'dist-sandboxed'), sandboxed.baseURL, {
      iframeTier: true,
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  it("runs the toolset's worker in the opaque-origin iframe under the page's policy, its module and its tools' chunk loaded across origins", async () => {
    if (!browser || !app) throw new Error('The app did not start.');
    const page = await browser.newPage();
    try {
      const violations = await recordViolations(page);
      await page.goto(new URL('sandboxed.html', app.url).href);
      await until(
        async () => (await answerText(page)) !== '',
        async () => `the sandboxed run's end. The page shows: ${await answerText(page)}`,
      );

      expect(await answerText(page)).toBe(SANDBOX_ANSWER);
      expect(sandboxed.requests).toHaveLength(2);
      const toolMessage = chatMessages(sandboxed.requests[1]?.body).at(-1);
      expect(toolMessage).toMatchObject({
        role: 'tool',
        content: expect.stringMatching(/status="ok">\nnull\n/),
      });
      expect(blockedLoads(violations())).toEqual([]);
      // The tool worker and the chunk of its tools came from the opaque origin, by CORS.
      const fromSandbox = app.requests
        .filter((item) => item.origin === 'null')
        .map((item) => item.path);
      const toolWorker = /^\/assets\/tools\.worker-[\w-]+\.js$/;
      const toolsChunk = /^\/assets\/sandboxed-tools-[\w-]+\.js$/;
      expect(
        fromSandbox.filter((path) => !toolWorker.test(path) && !toolsChunk.test(path)),
      ).toEqual([]);
      expect(fromSandbox.some((path) => toolWorker.test(path))).toBe(true);
      expect(fromSandbox.some((path) => toolsChunk.test(path))).toBe(true);
      const policy = await app.policy();
      expect(policy).toContain("worker-src 'self' blob:");
      expect(policy).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    } finally {
      await page.close();
    }
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
  'airlock-agents/webmcp': () => import('../../src/webmcp'),
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

/**
 * The Quick start with an iframe-tier toolset: its own page and config, the README's worker
 * entry and proxy config reused. Its tool answers with the origin it runs in.
 */
const IFRAME_APP: Record<string, string> = {
  'vite.sandboxed.config.ts': `import { mergeConfig } from 'vite';
import quickStart from './vite.config';

export default mergeConfig(quickStart, {
  build: { outDir: 'dist-sandboxed', rollupOptions: { input: 'sandboxed.html' } },
});
`,
  'sandboxed.html': `<!doctype html>
<html lang="en">
  <head><meta charset="UTF-8" /><title>sandboxed</title></head>
  <body>
    <p id="answer"></p>
    <script type="module" src="/src/sandboxed.ts"></script>
  </body>
</html>
`,
  // A loader, as docs/tools.md advises: the tools are a chunk the worker imports on start.
  'src/tools.worker.ts': `import { serveTools } from 'airlock-agents/sandbox';

serveTools(() => import('./sandboxed-tools').then((module) => module.tools));
`,
  'src/sandboxed-tools.ts': `import { tool } from 'airlock-agents/sandbox';
import { z } from 'zod';

export const tools = [
  tool({
    name: 'where_am_i',
    description: 'The origin this tool runs in.',
    parameters: z.object({}),
    execute: () => self.origin,
  }),
];
`,
  'src/sandboxed.ts': `import { createAgent } from 'airlock-agents';
import toolsUrl from './tools.worker.ts?worker&url';

const agent = createAgent({
  worker: () => new Worker(new URL('./agent.worker.ts', import.meta.url), { type: 'module' }),
  model: { baseURL: '/llm/v1', model: 'gpt-4o-mini' },
  toolsets: [{ name: 'sandboxed', isolation: 'iframe', workerUrl: toolsUrl }],
});

async function ask(): Promise<void> {
  let text = '';
  for await (const event of agent.run('Where do sandboxed tools run?')) {
    if (event.type === 'text-delta') text += event.delta;
    if (event.type === 'run-error') text = \`Error: \${event.error.code} \${event.error.message}\`;
  }
  document.querySelector('#answer')!.textContent = text;
}
void ask();
`,
};

/** What the agent worker of a build loads: at start, and only through `import()`. */
interface WorkerBundle {
  readonly start: string[];
  readonly lazy: string[];
  /** Each start file gzipped on its own, as a server sends it. */
  readonly startGzipBytes: number;
}

/**
 * Follows the built agent worker's imports: its static imports (at any depth) load at
 * start, what only `import()` reaches loads on use.
 */
function workerBundle(assets: string): WorkerBundle {
  const entry = readdirSync(assets).find((name) => /^agent\.worker-.*\.js$/.test(name));
  if (!entry) throw new Error(`No agent worker in ${assets}.`);
  const imports = (name: string) => {
    const code = readFileSync(join(assets, name), 'utf8');
    const { module, errors } = parseSync(name, code);
    if (errors.length > 0) throw new Error(`${name} does not parse: ${errors[0]?.message}`);
    const named = (specifier: string) => join(dirname(name), specifier);
    return {
      static: [
        ...module.staticImports.map((item) => named(item.moduleRequest.value)),
        ...module.staticExports.flatMap((item) =>
          item.entries.flatMap((exported) =>
            exported.moduleRequest ? [named(exported.moduleRequest.value)] : [],
          ),
        ),
      ],
      // A dynamic import's specifier is an expression: followed when it is a plain string.
      dynamic: module.dynamicImports.flatMap((item) => {
        const literal = /^(['"`])([^'"`$]+)\1$/.exec(
          code.slice(item.moduleRequest.start, item.moduleRequest.end),
        );
        return literal?.[2] ? [named(literal[2])] : [];
      }),
    };
  };
  const start = new Set([entry]);
  for (const name of start) for (const imported of imports(name).static) start.add(imported);
  const reached = new Set(start);
  for (const name of reached) {
    const { static: staticImports, dynamic } = imports(name);
    for (const imported of [...staticImports, ...dynamic]) reached.add(imported);
  }
  return {
    start: [...start],
    lazy: [...reached].filter((name) => !start.has(name)),
    startGzipBytes: [...start].reduce(
      (sum, name) => sum + gzipSync(readFileSync(join(assets, name))).length,
      0,
    ),
  };
}

function requireModels(): ModelServer {
  if (!models) throw new Error('The model server did not start.');
  return models;
}

/** The options of docs/deployment.md's `serveBuiltApp` and `contentSecurityPolicy`. */
interface ServeOptions {
  readonly connect?: readonly string[];
  readonly iframeTier?: boolean;
}

/** docs/deployment.md's `serve-built-app.mjs`, written into the app. */
interface ServeBuiltAppModule {
  serveBuiltApp(
    root: string,
    options?: ServeOptions,
  ): (req: IncomingMessage, res: ServerResponse) => void;
  contentSecurityPolicy(options?: ServeOptions): string;
}

interface AppServer {
  readonly url: string;
  /** Every request the server got: its path and its `Origin` header. */
  readonly requests: readonly { readonly path: string; readonly origin: string | undefined }[];
  policy(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The production server of docs/deployment.md: its module serves the built files, and the
 * proxy of the packed package (anonymous here: the test has no users) answers /llm/v1.
 */
async function startAppServer(
  root: string,
  upstream: string,
  options: ServeOptions,
): Promise<AppServer> {
  const served = (await import(
    /* @vite-ignore */ pathToFileURL(join(appDir, 'serve-built-app.mjs')).href
  )) as ServeBuiltAppModule;
  const { createProxyHandler, toNodeListener } = (await import(
    /* @vite-ignore */ pathToFileURL(join(appDir, 'proxy.mjs')).href
  )) as typeof import('../../src/proxy');
  const proxy = toNodeListener(
    createProxyHandler({
      upstream,
      apiKey: 'sk-production-test',
      allowedModels: ['gpt-4o-mini'],
      allowAnonymous: true,
      logger: () => {},
    }),
  );
  const files = served.serveBuiltApp(root, options);
  const requests: { path: string; origin: string | undefined }[] = [];
  const server: Server = createHttpServer((req, res) => {
    requests.push({ path: req.url ?? '', origin: req.headers.origin });
    return req.url?.startsWith('/llm/v1/') ? proxy(req, res) : files(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('The app server has no port.');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    requests,
    policy: async () => served.contentSecurityPolicy(options),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One request with the path exactly as given: `fetch` would resolve its dot segments first. */
function rawRequest(
  base: string,
  method: string,
  path: string,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = request({ hostname, port, method, path }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
      );
    });
    outgoing.once('error', reject);
    outgoing.end();
  });
}

/**
 * Collects the page's CSP violations, in its frames and as the console reports them for its
 * workers; resolves each as `directive blocked-uri` (or the console's sentence).
 */
async function recordViolations(page: Page): Promise<() => readonly string[]> {
  const reported: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) reported.push(message.text());
  });
  await page.addInitScript(() => {
    addEventListener('securitypolicyviolation', (violation) => {
      console.error(
        `Content Security Policy violation: ${violation.effectiveDirective} ${violation.blockedURI}`,
      );
    });
  });
  return () => [...reported];
}

/**
 * The violations that refused a script, worker, frame or request: all but the refused
 * evaluations of strings (the test's own probe, and libraries that test for it).
 */
function blockedLoads(violations: readonly string[]): string[] {
  return violations.filter(
    (violation) =>
      !/ eval$|evaluate a string as JavaScript|'unsafe-eval' is not an allowed source/.test(
        violation,
      ),
  );
}

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
