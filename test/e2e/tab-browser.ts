/**
 * Pages of one browser for the tabs test (`tabs.e2e.test.ts`), in each engine: Chromium
 * through Playwright (pages of one context), Firefox through puppeteer-core (pages of one
 * browser), WebKitGTK over classic WebDriver (windows of one session, one spoken to at a
 * time). A page is reached only through the `tabs` object `tabs-page/main.ts` puts on it.
 */
import { WebkitSession } from '../../scripts/browsers/webkit-session.mjs';
import { webkitOptions } from '../../scripts/browsers.mjs';
import { type Engine, launchChromium, launchFirefox } from './engine';

/** One page: a member of its `tabs` object read, or called with `args`. */
export interface TabPage {
  call(member: string, args?: readonly unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

/** A browser whose pages share one origin's storage, Web Locks and BroadcastChannel. */
export interface TabBrowser {
  open(url: string, waitMs: number): Promise<TabPage>;
  close(): Promise<void>;
}

/** Reads or calls `tabs[member]` in the page (run there: it must stand alone). */
function callTabs([member, args]: readonly [string, readonly unknown[]]): unknown {
  const tabs = (globalThis as unknown as { tabs: Record<string, unknown> }).tabs;
  const value = tabs[member];
  return typeof value === 'function' ? value.apply(tabs, args) : value;
}

/**
 * `callTabs` with its answer as JSON text: WebDriver BiDi (puppeteer's Firefox) sends an
 * object met twice in one answer as a bare reference, which puppeteer reads as `undefined`
 * (the step's `usage` a `step-finish` and its `run-finish` share after one structured clone).
 */
async function callTabsAsJson([member, args]: readonly [
  string,
  readonly unknown[],
]): Promise<string> {
  const tabs = (globalThis as unknown as { tabs: Record<string, unknown> }).tabs;
  const value = tabs[member];
  return JSON.stringify({
    value: await (typeof value === 'function' ? value.apply(tabs, args) : value),
  });
}

/** Resolves once `check` holds, polling; fails after `ms`. */
async function until(check: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Launches the engine with no page yet. */
export async function openTabBrowser(engine: Engine): Promise<TabBrowser> {
  if (engine === 'webkit') return openWebkitTabs();
  if (engine === 'chromium') {
    const browser = await launchChromium();
    const context = await browser.newContext();
    return {
      open: async (url, waitMs) => {
        const page = await context.newPage();
        await page.goto(url);
        await page.waitForFunction(() => 'tabs' in globalThis, undefined, { timeout: waitMs });
        return {
          call: async (member, args = []) =>
            (
              JSON.parse(await page.evaluate(callTabsAsJson, [member, args] as const)) as {
                value: unknown;
              }
            ).value,
          close: () => page.close(),
        };
      },
      close: async () => {
        await context.close();
        await browser.close();
      },
    };
  }
  const browser = await launchFirefox();
  return {
    open: async (url, waitMs) => {
      const page = await browser.newPage();
      await page.goto(url);
      await page.waitForFunction(() => 'tabs' in globalThis, { timeout: waitMs });
      return {
        call: async (member, args = []) =>
          (
            JSON.parse(await page.evaluate(callTabsAsJson, [member, args] as const)) as {
              value: unknown;
            }
          ).value,
        close: () => page.close(),
      };
    },
    close: () => browser.close(),
  };
}

/**
 * WebKitGTK's windows: classic WebDriver speaks to one window at a time, so every command
 * switches to its page's window first, one command after the other.
 */
async function openWebkitTabs(): Promise<TabBrowser> {
  const session = await WebkitSession.start(webkitOptions);
  const at = (path: string) => `/session/${session.id}${path}`;
  await session.command('POST', at('/timeouts'), { script: 60_000 });
  // The session's first window: kept open and blank, since closing a session's last window
  // ends the session, and the current window again after a page's closes (WebDriver opens a
  // new window only from a current one).
  const anchor = (await session.command('GET', at('/window'))) as string;
  let queue: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(action: () => Promise<T>): Promise<T> => {
    const result = queue.then(action);
    queue = result.catch(() => undefined);
    return result;
  };
  const script = `const [member, args, done] = arguments;
    Promise.resolve()
      .then(() => (${callTabs.toString()})([member, args]))
      .then((value) => done({ value }), (error) => done({ error: String(error) }));`;
  return {
    open: async (url, waitMs) => {
      const handle = await inTurn(async () => {
        const { handle: opened } = (await session.command('POST', at('/window/new'), {
          type: 'tab',
        })) as { handle: string };
        await session.command('POST', at('/window'), { handle: opened });
        await session.navigate(url);
        return opened;
      });
      const inWindow = <T>(action: () => Promise<T>) =>
        inTurn(async () => {
          await session.command('POST', at('/window'), { handle });
          return action();
        });
      await until(
        async () =>
          (await inWindow(() =>
            session.command('POST', at('/execute/sync'), {
              script: "return 'tabs' in globalThis;",
              args: [],
            }),
          )) === true,
        'the tabs page',
        waitMs,
      );
      return {
        call: async (member, args = []) => {
          const reply = (await inWindow(() =>
            session.command('POST', at('/execute/async'), { script, args: [member, args] }),
          )) as { value?: unknown; error?: string };
          if (reply.error !== undefined) throw new Error(reply.error);
          return reply.value;
        },
        close: () =>
          inWindow(async () => {
            await session.command('DELETE', at('/window'));
            await session.command('POST', at('/window'), { handle: anchor });
          }),
      };
    },
    close: () => session.close(),
  };
}
