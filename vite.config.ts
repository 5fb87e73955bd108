import { fileURLToPath } from 'node:url';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import type { BrowserProviderOption } from 'vitest/node';
import { puppeteerFirefox } from './scripts/browsers/firefox-provider.mjs';
import { webkitGtk } from './scripts/browsers/webkit-provider.mjs';
import { chromiumArgs, chromiumPath, firefoxPath, webkitOptions } from './scripts/browsers.mjs';
import { workerTargets } from './test/setup/browser-targets.mjs';
import { closeBuiltAgentWorker, serveBuiltAgentWorker } from './test/setup/built-agent-worker.mjs';
import { goOffline } from './test/setup/network.mjs';
import { writeSoakReport } from './test/setup/soak-report.mjs';
import { clickAsUser } from './test/setup/user-click.mjs';
import { workerThreads } from './test/setup/worker-threads.mjs';

const source = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

/** The package's own entries, resolved to source so tests and the demo use them unbuilt. */
export const airlockAliases = [
  { find: /^airlock-agents$/, replacement: source('index.ts') },
  { find: /^airlock-agents\/worker$/, replacement: source('worker.ts') },
  { find: /^airlock-agents\/models$/, replacement: source('models.ts') },
  { find: /^airlock-agents\/webmcp$/, replacement: source('webmcp.ts') },
  { find: /^airlock-agents\/sandbox$/, replacement: source('sandbox.ts') },
  { find: /^airlock-agents\/code$/, replacement: source('code.ts') },
  { find: /^airlock-agents\/testing$/, replacement: source('testing.ts') },
  { find: /^airlock-agents\/testing\/remote$/, replacement: source('testing-remote.ts') },
  { find: /^airlock-agents\/proxy$/, replacement: source('proxy.ts') },
  { find: /^airlock-agents\/ai-sdk$/, replacement: source('ai-sdk.ts') },
  { find: /^airlock-agents\/otel$/, replacement: source('otel.ts') },
  { find: /^airlock-agents\/tabs$/, replacement: source('tabs.ts') },
  { find: /^airlock-agents\/mcp-auth$/, replacement: source('mcp-auth.ts') },
];

/**
 * The browser suite in one engine. Every engine gets every file; a test that needs one
 * engine's tooling (CDP, say) says so itself. The engines run one after the other
 * (`groupOrder`, and `npm test` runs them apart): two cores cannot host three browsers at
 * once without upsetting the timing checks.
 */
function browserProject(
  browser: 'chromium' | 'firefox' | 'webkit',
  options: { provider: BrowserProviderOption; screenshotFailures?: boolean },
): TestProjectInlineConfiguration {
  return {
    extends: true,
    // Every dependency the tests reach, so Vite never discovers one mid-run and reloads
    // the page under a running test.
    optimizeDeps: {
      include: [
        'comlink',
        'openai',
        'zod',
        'zod/mini',
        'dexie',
        'fast-check',
        'jsonrepair',
        'tokenx',
        '@modelcontextprotocol/client',
        '@cfworker/json-schema',
        're2js',
        'quickjs-emscripten-core',
        '@jitl/quickjs-singlefile-browser-release-sync',
        'ai',
        '@ai-sdk/react',
        '@opentelemetry/api',
        '@opentelemetry/sdk-trace-base',
        '@wllama/wllama/esm/index.js',
      ],
    },
    // Iframe-tier tool workers run in an opaque origin: they load their modules with
    // `Origin: null`, which Vite's default CORS (localhost origins only) refuses.
    server: { cors: { origin: '*' } },
    test: {
      name: browser,
      include: ['test/browser/**/*.test.ts'],
      // Room for an agent worker that starts slowly late in a long run (its start allows 30 s).
      testTimeout: 40_000,
      sequence: { groupOrder: browserOrder[browser] },
      browser: {
        enabled: true,
        headless: true,
        instances: [{ browser }],
        commands: {
          workerThreads,
          goOffline,
          serveBuiltAgentWorker,
          closeBuiltAgentWorker,
          clickAsUser,
        },
        ...options,
      },
    },
  };
}

const browserOrder = { chromium: 0, firefox: 1, webkit: 2 } as const;

/**
 * The fault soak in one engine: `soak` (Chromium), `soak-firefox`, `soak-webkit`. One after
 * the other (`groupOrder`), each after its engine's browser suite when `npm test` runs them
 * together: a long run of its own, not beside the suite's timing checks.
 */
function soakProject(
  browser: 'chromium' | 'firefox' | 'webkit',
  options: { provider: BrowserProviderOption; screenshotFailures?: boolean },
): TestProjectInlineConfiguration {
  return {
    extends: true,
    // The agent worker's own dependencies: the soak page loads nothing else.
    optimizeDeps: {
      include: ['comlink', 'openai', 'zod/mini', 'dexie', 'jsonrepair', 'tokenx'],
    },
    test: {
      name: browser === 'chromium' ? 'soak' : `soak-${browser}`,
      include: ['test/soak/**/*.test.ts'],
      testTimeout: 3_600_000,
      sequence: { groupOrder: browserOrder[browser] + 1 },
      browser: {
        enabled: true,
        headless: true,
        instances: [{ browser }],
        commands: { workerTargets, writeSoakReport },
        ...options,
      },
    },
  };
}

/**
 * The built demo driven end to end (`test/e2e`), the same flows in each engine: `e2e` in
 * Chromium with Playwright, `e2e-firefox` with puppeteer-core, `e2e-webkit` over WebDriver.
 */
function e2eProject(browser: 'chromium' | 'firefox' | 'webkit'): TestProjectInlineConfiguration {
  return {
    extends: true,
    test: {
      name: browser === 'chromium' ? 'e2e' : `e2e-${browser}`,
      include: ['test/e2e/**/*.test.ts'],
      environment: 'node',
      env: { AIRLOCK_E2E_BROWSER: browser },
      testTimeout: 120_000,
      hookTimeout: 180_000,
      // After the browser suites, not beside them: its own browser would load the CPU
      // that the browser tests' timing checks (a killed worker's thread going idle) read.
      sequence: { groupOrder: 3 },
    },
  };
}

export default defineConfig({
  resolve: { alias: airlockAliases },
  build: {
    lib: {
      entry: {
        index: source('index.ts'),
        worker: source('worker.ts'),
        models: source('models.ts'),
        webmcp: source('webmcp.ts'),
        sandbox: source('sandbox.ts'),
        code: source('code.ts'),
        testing: source('testing.ts'),
        'testing-remote': source('testing-remote.ts'),
        proxy: source('proxy.ts'),
        'ai-sdk': source('ai-sdk.ts'),
        otel: source('otel.ts'),
        tabs: source('tabs.ts'),
        'mcp-auth': source('mcp-auth.ts'),
      },
      formats: ['es'],
    },
    rollupOptions: {
      external: [
        /^node:/,
        'openai',
        /^openai\//,
        'comlink',
        // `zod/mini` for Airlock's own schemas; `zod` for the MCP SDK's.
        /^zod($|\/)/,
        'dexie',
        /^@modelcontextprotocol\/sdk\//,
        /^@modelcontextprotocol\/client($|\/)/,
        '@cfworker/json-schema',
        'quickjs-emscripten-core',
        /^@jitl\//,
        'ai',
        /^@opentelemetry\//,
        /^@wllama\//,
      ],
    },
    sourcemap: true,
  },
  test: {
    globalSetup: [
      './test/setup/model-server.global.ts',
      './test/setup/mcp-server.global.ts',
      './test/setup/refusing-proxy.global.ts',
      './test/setup/side-effects.global.ts',
      './test/setup/test-model.global.ts',
    ],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // After the browser suites, not beside them: two cores busy with unit tests
          // upset the browser tests' timing checks.
          sequence: { groupOrder: 3 },
        },
      },
      {
        extends: true,
        test: {
          // The proxy's tests once more, served by the Fetch-API shell (`toNodeListener(createProxyHandler())`,
          // what edge runtimes run) instead of the Node shell (`createNodeHandler`): test/unit/proxy/support.ts.
          name: 'unit-fetch-shell',
          include: ['test/unit/proxy/**/*.test.ts'],
          environment: 'node',
          env: { AIRLOCK_PROXY_SHELL: 'fetch' },
          sequence: { groupOrder: 3 },
        },
      },
      browserProject('chromium', {
        provider: playwright({
          launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
        }),
      }),
      browserProject('firefox', {
        provider: puppeteerFirefox({ executablePath: firefoxPath }),
        // Screenshots need Playwright; the suite takes none.
        screenshotFailures: false,
      }),
      browserProject('webkit', {
        provider: webkitGtk(webkitOptions),
        screenshotFailures: false,
      }),
      e2eProject('chromium'),
      e2eProject('firefox'),
      e2eProject('webkit'),
      {
        // Not `extends: true`: the app must resolve airlock-agents from the packed tarball,
        // never through the aliases to src/.
        test: {
          name: 'example',
          include: ['test/example/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          // npm pack (a build), npm create and npm install come first.
          hookTimeout: 300_000,
          // Last and alone: its build, install and browser load both cores, which the browser
          // suites' timing checks and the e2e test would feel.
          sequence: { groupOrder: 4 },
        },
      },
      soakProject('chromium', {
        provider: playwright({
          launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
        }),
      }),
      soakProject('firefox', {
        provider: puppeteerFirefox({ executablePath: firefoxPath }),
        screenshotFailures: false,
      }),
      soakProject('webkit', { provider: webkitGtk(webkitOptions), screenshotFailures: false }),
    ],
  },
});
