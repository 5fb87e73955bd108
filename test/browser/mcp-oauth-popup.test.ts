import { authorizeMcp, signOutMcp } from 'airlock-agents/mcp-auth';
import { afterEach, beforeEach, describe, expect, inject, it, onTestFinished } from 'vitest';
import { commands } from 'vitest/browser';
import { issuedTokens, pageFrame } from './mcp-oauth-support';

declare module 'vitest/browser' {
  interface BrowserCommands {
    /** Clicks as a user (a real gesture); false where the provider cannot (test/setup/user-click.mjs). */
    clickAsUser: (selector: string) => Promise<boolean>;
  }
}

/**
 * `authorizeMcp`'s default path: a real popup from `window.open`, opened as apps open it, from
 * a click on a button. The authorization server's page loads in it (the test server consents
 * at once and sends it to the proxy's callback), the callback page posts "done" to its opener
 * and closes itself, and `authorizeMcp` resolves. The click is a user's (Playwright's input in
 * Chromium, WebDriver's Element Click in WebKit, whose popup blocker refuses a window a script
 * opens without one); Firefox's driver has no such click, and puppeteer turns its popup blocker
 * off, so there the button's `click()` is enough. A real blocker's refusal is met in a frame
 * sandboxed without `allow-popups`, where every engine refuses `window.open`.
 */
const mcpPath = inject('mcpOAuthProxyPath');
const realFetch = window.fetch;
const realOpen = window.open;
let popups: Window[] = [];

beforeEach(() => {
  popups = [];
  // Watches the popups authorizeMcp opens; the real window.open opens them.
  window.open = (...args: Parameters<typeof window.open>) => {
    const opened = realOpen.apply(window, args);
    if (opened) popups.push(opened);
    return opened;
  };
});
afterEach(() => {
  window.open = realOpen;
  window.fetch = realFetch;
  for (const popup of popups) if (!popup.closed) popup.close();
});

/** Polls `check` until it holds, every 50 ms, for at most `ms`. */
async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('The condition never held.');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Calls authorizeMcp from a click on a button of the test's page, as an app does; its outcome. */
async function authorizeFromClick(options: { timeoutMs: number }): Promise<unknown> {
  const button = document.createElement('button');
  button.id = 'sign-in-to-oauth';
  button.textContent = 'Sign in to the MCP server';
  document.body.append(button);
  onTestFinished(() => button.remove());
  const outcome = new Promise<unknown>((resolve) => {
    button.addEventListener(
      'click',
      () => {
        authorizeMcp('oauth', { mcpPath, ...options }).then(
          () => resolve('authorized'),
          (error: unknown) => resolve(error),
        );
      },
      { once: true },
    );
  });
  if (!(await commands.clickAsUser('#sign-in-to-oauth'))) button.click();
  return outcome;
}

describe("authorizeMcp's default popup", () => {
  it('opens a popup, the authorization runs in it, the callback page says "done" to the opener and the popup closes', async () => {
    await signOutMcp('oauth', { mcpPath });
    const issuedBefore = (await issuedTokens()).length;
    const said: unknown[] = [];
    const onMessage = (event: MessageEvent) => {
      if (event.source === popups[0]) said.push(event.data);
    };
    window.addEventListener('message', onMessage);
    onTestFinished(() => window.removeEventListener('message', onMessage));

    expect(await authorizeFromClick({ timeoutMs: 60_000 })).toBe('authorized');

    expect(popups).toHaveLength(1);
    expect(said).toEqual([{ type: 'airlock-mcp-oauth', server: 'oauth', outcome: 'done' }]);
    // The authorization server issued this user's tokens to the proxy: its page ran in the popup.
    expect((await issuedTokens()).length).toBeGreaterThan(issuedBefore);
    await until(() => popups[0]?.closed === true);
  });

  it('fails window-closed as soon as the user closes the popup, not at the deadline', async () => {
    // The user sits on the authorization server's page: the proxy's authorization URL is
    // swapped for a page of that server that goes nowhere.
    const stay = `${inject('mcpOAuthServerUrl')}/control/log`;
    window.fetch = async (input, init) => {
      const response = await realFetch(input, init);
      if (!String(input instanceof Request ? input.url : input).endsWith('/oauth/start'))
        return response;
      return Response.json({ ...(await response.json()), authorizationUrl: stay });
    };
    // Past the test's own timeout: only the closed popup can end the wait in time.
    const pending = authorizeFromClick({ timeoutMs: 600_000 });
    await until(() => popups.length === 1);
    const popup = popups[0] as Window;
    // Cross-origin once it is on the authorization server's page: its location is unreadable.
    await until(() => {
      try {
        return popup.location.href === undefined;
      } catch {
        return true;
      }
    });
    popup.close();
    expect(await pending).toMatchObject({
      code: 'mcp-auth-failed',
      details: { server: 'oauth', reason: 'window-closed' },
    });
  });

  it('fails window-closed at once when the popup is closed before the proxy answered', async () => {
    window.fetch = async (input, init) => {
      // The user closes the popup while the proxy prepares the authorization.
      for (const popup of popups) popup.close();
      return realFetch(input, init);
    };
    expect(await authorizeFromClick({ timeoutMs: 600_000 })).toMatchObject({
      code: 'mcp-auth-failed',
      details: { server: 'oauth', reason: 'window-closed' },
    });
  });

  it('fails window-blocked when the browser refuses the popup (a frame sandboxed without allow-popups)', async () => {
    const frame = await pageFrame({ step: 'popup', mcpPath }, 'allow-scripts allow-same-origin');
    const reported = frame.next();
    frame.window.document.querySelector('button')?.click();
    expect(await reported).toMatchObject({
      ok: false,
      error: { code: 'mcp-auth-failed', details: { server: 'oauth', reason: 'window-blocked' } },
    });
  });
});
