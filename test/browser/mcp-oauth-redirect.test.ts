import { signOutMcp } from 'airlock-agents/mcp-auth';
import { describe, expect, inject, it } from 'vitest';
import { issuedTokens, pageFrame } from './mcp-oauth-support';

/**
 * MCP OAuth in redirect mode, for apps that cannot use a popup: an app's page (in a frame of
 * the test, `fixtures/mcp-oauth-page.html`) calls `authorizeMcp(server, { mode: 'redirect',
 * returnTo })` and goes to the authorization server; the proxy's callback sends it back to
 * `returnTo` with a marker, and the returned page's `completeMcpAuthorization()` removes the
 * marker and asks the proxy whether it holds the grant. The URL's word is never taken for it.
 */
const mcpPath = inject('mcpOAuthProxyPath');

describe('MCP OAuth in redirect mode', () => {
  it('goes to the authorization server and back, and the returned page learns from the proxy that it is authorised', async () => {
    await signOutMcp('oauth', { mcpPath });
    const frame = await pageFrame({ step: 'redirect', mcpPath });
    expect(frame.first).toMatchObject({ ok: true, navigating: true });

    const returned = await frame.next();
    expect(returned).toMatchObject({
      ok: true,
      step: 'complete',
      result: { server: 'oauth', authorized: true },
    });
    // The marker is gone from the URL (and from its history entry): a reload does not repeat it.
    expect(returned.href).not.toContain('airlock-mcp');
    expect(frame.window.location.hash).toBe('');

    // Nothing either page saw holds a token: their URLs, and every response their fetch got.
    const tokens = await issuedTokens();
    expect(tokens.length).toBeGreaterThan(0);
    expect(returned.referrer).not.toContain('code=');
    const seen = [
      frame.first.href,
      returned.href,
      returned.referrer,
      ...frame.first.responses,
      ...returned.responses,
    ];
    expect(seen.join('\n')).toContain('authorizationUrl');
    for (const token of tokens) for (const text of seen) expect(text).not.toContain(token);
  });

  it('refuses to send the browser back to another origin: the proxy is no open redirect', async () => {
    const frame = await pageFrame({
      step: 'redirect',
      mcpPath,
      returnTo: 'https://attacker.example/collect',
    });
    expect(frame.first).toMatchObject({
      ok: false,
      error: {
        code: 'mcp-auth-failed',
        details: {
          server: 'oauth',
          reason: 'proxy-refused',
          status: 400,
          proxyCode: 'field_not_allowed',
        },
      },
    });
    // The page stayed where it was: it reported from its own URL, and no flow was started.
    expect(frame.first.href).toContain('step=redirect');
  });

  it('refuses returnTo values that are not plain URLs of the page, at the proxy itself', async () => {
    const start = `${mcpPath}/oauth/oauth/start`;
    const bodies = [
      { returnTo: 'javascript:alert(1)' },
      { returnTo: '//attacker.example/' },
      { returnTo: `${location.protocol}//user:pw@${location.host}/` },
      { returnTo: `${location.origin}/#x` },
      { returnTo: 42 },
      { returnTo: `${location.origin}/${'a'.repeat(10_000)}` },
      ['not', 'an', 'object'],
    ];
    for (const body of bodies) {
      const answer = await fetch(start, { method: 'POST', body: JSON.stringify(body) });
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect((await answer.json()).error.param).toBe('returnTo');
    }
    const notJson = await fetch(start, { method: 'POST', body: '{"returnTo":' });
    expect(notJson.status).toBe(400);
  });

  it('does not take a forged marker for success: the proxy says the user is not authorised', async () => {
    await signOutMcp('oauth', { mcpPath });
    const frame = await pageFrame(
      { step: 'complete', mcpPath },
      undefined,
      '#airlock-mcp-oauth=done&airlock-mcp-server=oauth',
    );
    expect(frame.first).toMatchObject({
      ok: true,
      result: { server: 'oauth', authorized: false },
    });
    expect(frame.first.href).not.toContain('airlock-mcp');
  });

  it('refuses a malformed marker with a typed error, and removes it', async () => {
    const frame = await pageFrame(
      { step: 'complete', mcpPath },
      undefined,
      '#airlock-mcp-oauth=done&airlock-mcp-server=..%2Fllm&keep=1',
    );
    expect(frame.first).toMatchObject({
      ok: false,
      error: { code: 'mcp-auth-failed', details: { reason: 'marker-malformed' } },
    });
    // The app's own fragment parameters stay.
    expect(frame.window.location.hash).toBe('#keep=1');
  });

  it('completes nothing on a page without the marker', async () => {
    const frame = await pageFrame({ step: 'complete', mcpPath }, undefined, '#section');
    expect(frame.first).toMatchObject({ ok: true, result: null });
    expect(frame.window.location.hash).toBe('#section');
  });
});
