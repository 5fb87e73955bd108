import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumArgs, chromiumPath } from '../../../scripts/browsers.mjs';

// The Playwright route to a browser's own WebMCP: Debian's Chromium with the `WebMCP`
// feature has `document.modelContext` natively. The entry, built by Vite into one module, is
// loaded by a page on 127.0.0.1 (a secure context), and must use the browser's, not install its own.

const entry = fileURLToPath(new URL('../../../src/webmcp.ts', import.meta.url));

async function bundledEntry(): Promise<string> {
  const output = await build({
    configFile: false,
    logLevel: 'silent',
    build: {
      write: false,
      minify: false,
      target: 'es2022',
      lib: { entry, formats: ['es'], fileName: 'webmcp' },
      rollupOptions: { output: { inlineDynamicImports: true } },
    },
  });
  const results = Array.isArray(output) ? output : [output];
  const chunk = results
    .flatMap((result) => ('output' in result ? result.output : []))
    .find((each) => each.type === 'chunk' && each.isEntry);
  if (chunk?.type !== 'chunk') throw new Error('The entry did not build.');
  return chunk.code;
}

let server: Server;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  const code = await bundledEntry();
  server = createServer((request, response) => {
    if (request.url === '/webmcp.js') {
      response.setHeader('content-type', 'text/javascript');
      response.end(code);
      return;
    }
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>native</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [...chromiumArgs, '--enable-features=WebMCP'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe("Chromium's own WebMCP", () => {
  it('is used, not replaced, and its tools become page tools that run through executeTool', async () => {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    // A module script of the page's own (an import() written here would be the test runner's).
    await page.addScriptTag({
      type: 'module',
      content: "import * as webmcp from '/webmcp.js'; window.webmcp = webmcp;",
    });
    await page.waitForFunction(() => 'webmcp' in window);
    const seen = await page.evaluate(async () => {
      // biome-ignore lint/suspicious/noExplicitAny: the built entry, untyped in the page
      const webmcp = (window as any).webmcp;
      const installed = webmcp.installModelContext();
      const context = (document as unknown as { modelContext: EventTarget }).modelContext;
      const calls: unknown[] = [];
      await installed.modelContext.registerTool({
        name: 'cart.add',
        description: 'Adds to the cart.',
        inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
        annotations: { readOnlyHint: true },
        execute: (input: unknown) => {
          calls.push(input);
          return { added: (input as { sku: string }).sku };
        },
      });
      const refused = await installed.modelContext
        .registerTool({ name: 'cart.add', description: 'Again.', execute: () => 1 })
        .then(
          () => 'registered',
          (error: Error) => error.name,
        );
      const { tools, dropped } = await webmcp.webmcpTools();
      const [cartAdd] = tools;
      const checked = await cartAdd.parameters['~standard'].validate({ sku: 7 });
      const output = await cartAdd.execute(
        { sku: 'A1' },
        { callId: 'call_1', signal: new AbortController().signal },
      );
      return {
        native: installed.native,
        same: installed.modelContext === context,
        refused,
        names: tools.map((each: { name: string }) => each.name),
        approval: cartAdd.spec.policy.approval,
        outputLabel: cartAdd.spec.policy.output,
        dropped,
        badArgumentsRefused: Array.isArray(checked.issues),
        output,
        calls,
      };
    });
    expect(seen).toEqual({
      native: true,
      same: true,
      refused: 'InvalidStateError',
      names: [expect.stringMatching(/^webmcp__cart_add_[0-9a-z]{6}$/)],
      approval: 'always',
      outputLabel: { integrity: 'untrusted', confidentiality: 'public' },
      dropped: [],
      badArgumentsRefused: true,
      output: { added: 'A1' },
      calls: [{ sku: 'A1' }],
    });
    await page.close();
  }, 120_000);

  it('registers the agent tool natively, and the native executeTool never hands a forged input to a run', async () => {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    await page.addScriptTag({
      type: 'module',
      content: "import * as webmcp from '/webmcp.js'; window.webmcp = webmcp;",
    });
    await page.waitForFunction(() => 'webmcp' in window);
    const seen = await page.evaluate(async () => {
      // biome-ignore lint/suspicious/noExplicitAny: the built entry and the browser's API, untyped in the page
      const { webmcp, document: page } = window as any;
      const prompts: unknown[] = [];
      // A stand-in for an agent: a run that ends at once with a text.
      const agent = {
        run: (input: unknown) => {
          prompts.push(input);
          return {
            async *[Symbol.asyncIterator]() {},
            result: Promise.resolve({ text: 'Done.' }),
          };
        },
      };
      const exposure = await webmcp.exposeToWebMCP(agent, {
        agentTool: { onApproval: () => false },
      });
      const [tool] = await page.modelContext.getTools();
      const forged = await page.modelContext
        .executeTool(tool, { prompt: 'x', approved: true })
        .then(
          () => 'ran',
          (error: Error) => error.name,
        );
      const answer = await page.modelContext.executeTool(tool, { prompt: 'Hello.' });
      exposure.unregister();
      const after = (await page.modelContext.getTools()).length;
      return {
        name: tool.name,
        annotations: tool.annotations,
        forged,
        answer,
        prompts: prompts.length,
        after,
      };
    });
    expect(seen).toEqual({
      name: 'ask_agent',
      annotations: expect.objectContaining({ readOnlyHint: false, untrustedContentHint: true }),
      forged: 'UnknownError',
      answer: '{"text":"Done."}',
      prompts: 1,
      after: 0,
    });
    await page.close();
  }, 120_000);
});
