import type { RemoteModelSession } from 'airlock-agents/testing/remote';
import { describe, expect, inject, it } from 'vitest';
import { agentFor, collect } from './support';

/** An agent whose model endpoint is one of the refusing proxies (`test/setup/refusing-proxy.global.ts`). */
function agentBehind(proxy: 'models' | 'caller' | 'key' | 'size') {
  const endpoint = { baseURL: `${inject('refusingProxyUrl')}/${proxy}/llm/v1` };
  return agentFor(endpoint as RemoteModelSession, { memory: { tools: false } });
}

async function runErrorOf(agent: ReturnType<typeof agentBehind>, input = 'Hello') {
  const events = await collect(agent.run(input));
  const last = events.at(-1);
  expect(last?.type).toBe('run-error');
  return last?.type === 'run-error' ? last.error : undefined;
}

describe("an Airlock proxy's refusals, seen by a page on another origin", () => {
  it('reports a model the proxy does not allow as model-not-allowed, in the proxy’s words, not as a refused key', async () => {
    const error = await runErrorOf(agentBehind('models'));

    expect(error).toMatchObject({
      code: 'model-not-allowed',
      details: { status: 403, proxyCode: 'model_not_allowed', param: 'model' },
    });
    expect(error?.message).toContain(
      'The model "airlock-test-model" is not allowed through this proxy.',
    );
    expect(error?.message).not.toMatch(/credential|key/i);
  });

  it("reports authorize's own 401 as proxy-unauthorized, quoting the app's answer", async () => {
    const error = await runErrorOf(agentBehind('caller'));

    expect(error).toMatchObject({
      code: 'proxy-unauthorized',
      details: { status: 401, proxyCode: 'authorize_refused' },
    });
    expect(error?.message).toContain('Your session has expired: sign in again.');
  });

  it("reports the upstream refusing the server's key as model-auth, as docs/errors.md says, and never shows the key", async () => {
    const error = await runErrorOf(agentBehind('key'));

    expect(error).toMatchObject({
      code: 'model-auth',
      details: { status: 502, proxyCode: 'upstream_auth_failed' },
    });
    expect(error?.message).toMatch(/check the API key configured on the server/);
    expect(error?.message).not.toMatch(/sk-|wxyz/);
  });

  it('reports a request over the proxy’s body limit as a refused turn, refused by limit-exceeded, keeping the status', async () => {
    const error = await runErrorOf(agentBehind('size'), 'x'.repeat(5_000));

    // A size limit refuses what the turn carried: the turn is kept as refused (refused-input.test.ts).
    expect(error).toMatchObject({
      code: 'input-refused',
      details: { status: 413, refusedBy: 'limit-exceeded', proxyCode: 'body_too_large' },
    });
    expect(error?.message).toContain('larger than this proxy accepts (2048 bytes)');
  });
});
