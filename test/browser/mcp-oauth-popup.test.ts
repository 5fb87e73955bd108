import { authorizeMcp, signOutMcp } from 'airlock-agents/mcp-auth';
import { afterEach, beforeEach, describe, expect, inject, it, onTestFinished } from 'vitest';
import { issuedTokens, pageFrame } from './mcp-oauth-support';

/**
 * `authorizeMcp`'s default path: a real popup from `window.open`. The authorization server's
 * page loads in it (the test server consents at once and sends it to the proxy's callback),
 * the callback page posts "done" to its opener and closes itself, and `authorizeMcp` resolves.
 * The engines' test browsers allow a script's popup without a click (Playwright's Chromium,
 * Firefox through puppeteer and WebKit through WebDriver turn their blockers off), so the
 * calls here need no gesture; a real blocker's refusal is met in a frame sandboxed without
 * `allow-popups`, where every engine refuses `window.open` for real.
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

    await authorizeMcp('oauth', { mcpPath, timeoutMs: 60_000 });

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
    const pending = authorizeMcp('oauth', { mcpPath, timeoutMs: 600_000 }).catch(
      (error: unknown) => error,
    );
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
    await expect(authorizeMcp('oauth', { mcpPath, timeoutMs: 600_000 })).rejects.toMatchObject({
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
