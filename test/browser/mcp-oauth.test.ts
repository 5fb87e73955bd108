import type { AgentEvent } from 'airlock-agents';
import { authorizeMcp, signOutMcp } from 'airlock-agents/mcp-auth';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { agentFor, collect, scriptModel } from './support';

/**
 * MCP OAuth held by the proxy, from the page: `authorizeMcp` starts the flow, the
 * authorization server's page loads in a frame (the test's stand-in for a popup: a frame's
 * window needs no popup permission in any engine), the proxy's callback page tells the page
 * "done", and the agent's MCP requests then carry the user's token, which the page never sees:
 * every response the page's `fetch` got, every message posted to it and every event of the run
 * are checked for the tokens the authorization server issued.
 */
const mcpPath = inject('mcpOAuthProxyPath');
const seen: string[] = [];
const realFetch = window.fetch;
const onMessage = (event: MessageEvent) => seen.push(`message ${JSON.stringify(event.data)}`);

beforeEach(() => {
  seen.length = 0;
  window.fetch = async (input, init) => {
    const response = await realFetch(input, init);
    seen.push(
      `${response.status} ${JSON.stringify([...response.headers])} ${await response.clone().text()}`,
    );
    return response;
  };
  window.addEventListener('message', onMessage);
});
afterEach(() => {
  window.fetch = realFetch;
  window.removeEventListener('message', onMessage);
  for (const frame of document.querySelectorAll('iframe[data-oauth]')) frame.remove();
});

async function issuedTokens(): Promise<string[]> {
  const log = (await (await realFetch(`${inject('mcpOAuthServerUrl')}/control/log`)).json()) as {
    issued: { access: string; refresh: string }[];
  };
  return log.issued.flatMap(({ access, refresh }) => [access, refresh]);
}

function frame(sandbox?: string): Window {
  const element = document.createElement('iframe');
  element.dataset.oauth = '';
  if (sandbox !== undefined) element.sandbox.value = sandbox;
  document.body.append(element);
  const window = element.contentWindow;
  if (!window) throw new Error('The frame has no window.');
  return window;
}

function oauthServer() {
  return { name: 'oauth', url: `${mcpPath}/oauth`, approval: 'never' as const };
}

describe('MCP OAuth held by the proxy, from the page', () => {
  it('asks for authorisation, authorises through a frame, then calls tools with a token the page never holds', async () => {
    // Another engine's run may have left a grant for the proxy's one anonymous user.
    await signOutMcp('oauth', { mcpPath });
    const before = agentFor(await scriptModel([{ text: 'Unused.' }]), { mcp: [oauthServer()] });
    await expect(before.ready).rejects.toMatchObject({
      code: 'mcp-auth-required',
      details: { server: 'oauth' },
    });
    await before.dispose();

    const window = frame();
    await authorizeMcp('oauth', { mcpPath, open: () => window, timeoutMs: 60_000 });
    expect(seen.some((text) => text.includes('"outcome":"done"'))).toBe(true);

    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_1', name: 'oauth__whoami', arguments: {} },
          { id: 'call_2', name: 'oauth__echo_auth', arguments: {} },
        ],
      },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [oauthServer()], memory: { tools: false } });
    expect(await agent.ready).toEqual(
      expect.arrayContaining(['oauth__whoami', 'oauth__echo_auth']),
    );
    const events: AgentEvent[] = await collect(agent.run('Who am I?'));
    const results = events.filter((event) => event.type === 'tool-result');
    expect(results).toMatchObject([
      { ok: true, output: { user: 'mcp-user' } },
      { ok: true, output: 'you sent Bearer [redacted]' },
    ]);
    await agent.dispose();

    const tokens = await issuedTokens();
    expect(tokens.length).toBeGreaterThan(0);
    const received = [...seen, JSON.stringify(events)];
    for (const token of tokens) {
      for (const text of received) expect(text).not.toContain(token);
    }
  });

  it('signs out: the proxy forgets the grant and the agent is asked for authorisation again', async () => {
    await authorizeMcp('oauth', { mcpPath, open: () => frame(), timeoutMs: 60_000 });
    await signOutMcp('oauth', { mcpPath });
    const agent = agentFor(await scriptModel([{ text: 'Unused.' }]), { mcp: [oauthServer()] });
    await expect(agent.ready).rejects.toMatchObject({ code: 'mcp-auth-required' });
    await agent.dispose();
  });

  it('ignores a look-alike message from another window and ends at its deadline', async () => {
    // A frame whose pages run no script: the callback page loads but cannot post its word.
    const target = frame('');
    const pending = authorizeMcp('oauth', {
      mcpPath,
      open: () => target,
      timeoutMs: 1_500,
    }).catch((error: unknown) => error);
    // The page itself posts what the callback page would: wrong source, wrong origin.
    window.postMessage({ type: 'airlock-mcp-oauth', server: 'oauth', outcome: 'done' }, '*');
    const error = await pending;
    expect(error).toMatchObject({
      code: 'mcp-auth-failed',
      details: { server: 'oauth', reason: 'timed-out' },
    });
  });

  it('refuses a server name that is not one', async () => {
    await expect(authorizeMcp('../llm', { mcpPath })).rejects.toMatchObject({
      code: 'invalid-options',
    });
  });
});
