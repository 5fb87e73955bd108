import type { AgentEvent, McpServerConfig } from 'airlock-agents';
import { describe, expect, inject, it } from 'vitest';
import type { ModernLogEntry, ReceivedRequest } from '../setup/mcp-modern-server';
import { agentFor, collect, receivedBodies, scriptModel } from './support';

/** A tenant of its own on the 2026-07-28 test server (`query` adds e.g. `&discover=garbage`). */
function modernTenant(query = '') {
  const tenant = `m-${crypto.randomUUID()}`;
  const origin = inject('mcpModernServerUrl');
  return {
    url: `${origin}/mcp?t=${tenant}${query}`,
    log: () => modernLog(origin, tenant),
    /** The server cuts the tenant's open listen streams, as a restart would. */
    async dropListens(): Promise<void> {
      await fetch(`${origin}/control/${tenant}/drop-listens`, { method: 'POST' });
    },
    async addTool(name: string): Promise<void> {
      await fetch(`${origin}/control/${tenant}/add-tool`, {
        method: 'POST',
        body: JSON.stringify({ name }),
      });
    },
  };
}

/** What the 2026-07-28 server received for `tenant`. */
async function modernLog(origin: string, tenant: string): Promise<ModernLogEntry[]> {
  return (await fetch(`${origin}/control/${tenant}/log`)).json() as Promise<ModernLogEntry[]>;
}

/** The log of the tenant the proxy's `modern` route serves (shared by the tests through it). */
function proxiedLog(): Promise<ModernLogEntry[]> {
  return modernLog(inject('mcpModernServerUrl'), 'secret');
}

function requestsIn(log: readonly ModernLogEntry[]): ReceivedRequest[] {
  return log.filter((entry): entry is ReceivedRequest => entry.kind === 'request');
}

/** Polls `read` until `accept` holds, for at most `ms`. */
async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, ms = 10_000) {
  const until = performance.now() + ms;
  let value = await read();
  while (!accept(value) && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

function toolResults(events: AgentEvent[]) {
  return events.filter(
    (event): event is Extract<AgentEvent, { type: 'tool-result' }> => event.type === 'tool-result',
  );
}

/** How `ready` failed: its code, details and message (all shown when an assertion on them fails). */
async function readyError(ready: Promise<unknown>): Promise<Record<string, unknown> | undefined> {
  return ready.then(
    () => undefined,
    (failure: { code?: unknown; details?: unknown; message?: unknown }) => ({
      code: failure.code,
      details: failure.details,
      message: failure.message,
    }),
  );
}

function server(url: string, options: Partial<McpServerConfig> = {}): McpServerConfig {
  return { name: 'modern', url, approval: 'never', protocol: '2026-07-28', ...options };
}

describe('MCP 2026-07-28 (stateless)', () => {
  it('lists and calls the tools of a 2026-07-28 server with no session, every request carrying the envelope', async () => {
    const tenant = modernTenant();
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_1', name: 'modern__echo', arguments: { text: 'hi there' } },
          { id: 'call_2', name: 'modern__add', arguments: { a: 2, b: 3 } },
        ],
      },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [server(tenant.url)], memory: { tools: false } });

    expect(await agent.ready).toEqual([
      'modern__echo',
      'modern__add',
      'modern__slow',
      'modern__delete_everything',
    ]);
    const results = toolResults(await collect(agent.run('Use them'))).sort((a, b) =>
      a.callId.localeCompare(b.callId),
    );

    expect(results).toMatchObject([
      { ok: true, output: 'echo: hi there' },
      { ok: true, output: { sum: 5 } },
    ]);
    const log = await tenant.log();
    expect(log).toContainEqual({ kind: 'call', name: 'echo', arguments: { text: 'hi there' } });
    const requests = requestsIn(log);
    expect(requests[0]?.method).toBe('server/discover');
    expect(requests.map((request) => request.method)).not.toContain('initialize');
    expect(requests.map((request) => request.httpMethod)).not.toContain('GET');
    for (const request of requests) {
      expect(request).toMatchObject({
        sessionHeader: null,
        versionHeader: '2026-07-28',
        envelopeVersion: '2026-07-28',
      });
      // A subscriptions/listen request has no params.name; every request names its method.
      expect(request.methodHeader).toBe(request.method);
    }
  });

  it("'auto' speaks 2026-07-28 to a server that offers it", async () => {
    const tenant = modernTenant();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'modern__echo', arguments: { text: 'auto' } }] },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [server(tenant.url, { protocol: 'auto' })] });

    expect(toolResults(await collect(agent.run('Echo')))).toMatchObject([
      { ok: true, output: 'echo: auto' },
    ]);
    const requests = requestsIn(await tenant.log());
    expect(requests.every((request) => request.envelopeVersion === '2026-07-28')).toBe(true);
  });

  it("'auto' fails ready with mcp-unavailable against a 2025-11-25 server reached directly whose CORS refuses the new headers", async () => {
    // The test server's CORS, like a 2025 server's, allows no Mcp-Method: the browser refuses
    // the probe as it would a server that is down. Through the proxy (below) it falls back.
    const session = await scriptModel([]);
    const url = `${inject('mcpServerUrl')}/mcp?t=t-${crypto.randomUUID()}`;
    const agent = agentFor(session, { mcp: [server(url, { name: 'old', protocol: 'auto' })] });

    expect(await readyError(agent.ready)).toMatchObject({
      code: 'mcp-unavailable',
      details: { server: 'old' },
      message: expect.stringContaining('negotiation'),
    });
  });

  it('cuts a slow call at its deadline by closing its stream, which the server takes as its cancellation', async () => {
    const tenant = modernTenant();
    const session = await scriptModel([
      {
        toolCalls: [{ id: 'call_s', name: 'modern__slow', arguments: { ms: 20_000, tag: 'late' } }],
      },
      { text: 'Too slow.' },
    ]);
    const agent = agentFor(session, { mcp: [server(tenant.url, { timeoutMs: 500 })] });

    const results = toolResults(await collect(agent.run('Be slow')));

    expect(results).toMatchObject([{ ok: false, error: { code: 'tool-timeout' } }]);
    const log = await eventually(tenant.log, (seen) =>
      seen.some((entry) => entry.kind === 'cancelled'),
    );
    expect(log).toContainEqual({ kind: 'cancelled', tag: 'late' });
  });

  it('offers a tool the server adds while connected, told on its subscriptions/listen stream', async () => {
    const tenant = modernTenant();
    const session = await scriptModel(Array.from({ length: 100 }, () => ({ text: 'ok' })));
    const agent = agentFor(session, { mcp: [server(tenant.url)], memory: { tools: false } });
    await agent.ready;
    await eventually(tenant.log, (seen) =>
      requestsIn(seen).some((request) => request.method === 'subscriptions/listen'),
    );

    await tenant.addTool('late_tool');
    const offered = await eventually(
      async () => {
        await agent.run('Which tools?').result;
        const bodies = await receivedBodies(session);
        return bodies.at(-1)?.tools?.map((offer) => offer.function.name) ?? [];
      },
      (names) => names.includes('modern__late_tool'),
    );

    expect(offered).toContain('modern__late_tool');
    expect(offered).toContain('modern__echo');
  });

  it('opens its subscriptions/listen stream again when the server cuts it, and later changes still arrive', async () => {
    const tenant = modernTenant();
    const session = await scriptModel(Array.from({ length: 100 }, () => ({ text: 'ok' })));
    const agent = agentFor(session, { mcp: [server(tenant.url)], memory: { tools: false } });
    await agent.ready;
    const listens = (log: readonly ModernLogEntry[]) =>
      requestsIn(log).filter((request) => request.method === 'subscriptions/listen').length;
    await eventually(tenant.log, (seen) => listens(seen) === 1);

    await tenant.dropListens();
    const log = await eventually(tenant.log, (seen) => listens(seen) === 2);
    expect(listens(log)).toBe(2);
    await tenant.addTool('after_the_cut');
    const offered = await eventually(
      async () => {
        await agent.run('Which tools?').result;
        const bodies = await receivedBodies(session);
        return bodies.at(-1)?.tools?.map((offer) => offer.function.name) ?? [];
      },
      (names) => names.includes('modern__after_the_cut'),
    );

    expect(offered).toContain('modern__after_the_cut');
  });

  it('closes its subscriptions/listen stream when the agent is disposed', async () => {
    const tenant = modernTenant();
    const session = await scriptModel([]);
    const agent = agentFor(session, { mcp: [server(tenant.url)] });
    await agent.ready;
    const before = await eventually(tenant.log, (seen) =>
      requestsIn(seen).some((request) => request.method === 'subscriptions/listen'),
    );
    expect(requestsIn(before).map((request) => request.method)).not.toContain(
      'notifications/cancelled',
    );

    await agent.dispose();

    // The stream's end and the cancellation's POST reach the server in either order (Firefox
    // often ends the stream first): both are waited for.
    const log = await eventually(
      tenant.log,
      (seen) =>
        seen.some((entry) => entry.kind === 'listen-closed') &&
        requestsIn(seen).some((request) => request.method === 'notifications/cancelled'),
    );
    expect(log).toContainEqual({ kind: 'listen-closed' });
    // The client's own close (a terminated worker would only drop the stream) also says so.
    expect(requestsIn(log).map((request) => request.method)).toContain('notifications/cancelled');
  });

  it('keeps its subscriptions/listen stream past connectTimeoutMs, so later list changes still arrive', async () => {
    const tenant = modernTenant();
    const session = await scriptModel(Array.from({ length: 100 }, () => ({ text: 'ok' })));
    const connectTimeoutMs = 500;
    const agent = agentFor(session, {
      mcp: [server(tenant.url, { connectTimeoutMs })],
      memory: { tools: false },
    });
    await agent.ready;
    await eventually(tenant.log, (seen) =>
      requestsIn(seen).some((request) => request.method === 'subscriptions/listen'),
    );
    // Past the start's deadline (a precondition, not a measured time): the stream must outlive it.
    await new Promise((resolve) => setTimeout(resolve, connectTimeoutMs * 3));

    await tenant.addTool('much_later_tool');
    const offered = await eventually(
      async () => {
        await agent.run('Which tools?').result;
        const bodies = await receivedBodies(session);
        return bodies.at(-1)?.tools?.map((offer) => offer.function.name) ?? [];
      },
      (names) => names.includes('modern__much_later_tool'),
    );

    expect(offered).toContain('modern__much_later_tool');
  });

  it('fails ready with mcp-protocol-unsupported, naming the server, when its server/discover answer is garbage', async () => {
    const tenant = modernTenant('&discover=garbage');
    const session = await scriptModel([]);
    const agent = agentFor(session, { mcp: [server(tenant.url)] });

    const error = await readyError(agent.ready);

    // A result of the wrong shape offers no revision: the SDK reads it as no modern evidence.
    expect(error).toMatchObject({
      code: 'mcp-protocol-unsupported',
      details: { server: 'modern', protocol: '2026-07-28' },
    });
    expect(requestsIn(await tenant.log()).map((request) => request.method)).toEqual([
      'server/discover',
    ]);
  });

  it('fails ready with mcp-protocol-unsupported when server/discover offers only an unknown revision', async () => {
    const tenant = modernTenant('&discover=future');
    const session = await scriptModel([]);
    const agent = agentFor(session, { mcp: [server(tenant.url)] });

    const error = await readyError(agent.ready);

    expect(error).toMatchObject({
      code: 'mcp-protocol-unsupported',
      message: expect.stringContaining('2026-07-28'),
    });
    expect(requestsIn(await tenant.log()).map((request) => request.method)).toEqual([
      'server/discover',
    ]);
  });

  it('refuses a protocol that is not a revision as invalid-options, before any worker starts', async () => {
    const session = await scriptModel([]);
    const url = modernTenant().url;
    const bad = { ...server(url), protocol: '2026-07-29' } as unknown as McpServerConfig;

    const error = await readyError(agentFor(session, { mcp: [bad] }).ready);

    expect(error).toMatchObject({
      code: 'invalid-options',
      message: expect.stringContaining('protocol'),
    });
  });
});

describe('MCP 2026-07-28 through the proxy route', () => {
  /** The 2025-11-25 test server's `secret` tenant, which the proxy's `notes` route serves. */
  const legacyLog = async () =>
    (await fetch(`${inject('mcpServerUrl')}/control/secret/log`)).json() as Promise<string[]>;

  it("'auto' falls back to the session of a 2025-11-25 server and calls its tools", async () => {
    const tag = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'notes__echo', arguments: { text: tag } }] },
      { text: 'Done.' },
    ]);
    const notes = { name: 'notes', url: inject('mcpProxyUrl'), approval: 'never' } as const;
    const agent = agentFor(session, { mcp: [{ ...notes, protocol: 'auto' }] });

    expect(await readyError(agent.ready)).toBeUndefined();
    expect(toolResults(await collect(agent.run('Echo')))).toMatchObject([
      { ok: true, output: `echo: ${tag}` },
    ]);
    expect(await legacyLog()).toContain(`call:echo:{"text":"${tag}"}`);
  });

  it('fails ready with mcp-protocol-unsupported when pinned to 2026-07-28 against a 2025-11-25 server', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      mcp: [{ name: 'notes', url: inject('mcpProxyUrl'), protocol: '2026-07-28' }],
    });

    expect(await readyError(agent.ready)).toMatchObject({
      code: 'mcp-protocol-unsupported',
      details: { server: 'notes', protocol: '2026-07-28' },
      message: expect.stringContaining('"notes"'),
    });
  });

  const proxied = (options: Partial<McpServerConfig> = {}) =>
    server(inject('mcpModernProxyUrl'), options);

  it('lists the allowed tools and calls them with the credentials the proxy adds, no session, every request enveloped', async () => {
    const tag = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'modern__echo', arguments: { text: tag } }] },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [proxied()], memory: { tools: false } });

    // delete_everything is the server's, outside the proxy's allowedTools: never offered.
    expect(await agent.ready).toEqual(['modern__echo', 'modern__add', 'modern__slow']);
    expect(toolResults(await collect(agent.run('Echo')))).toMatchObject([
      { ok: true, output: `echo: ${tag}` },
    ]);

    const log = await proxiedLog();
    expect(log).toContainEqual({ kind: 'call', name: 'echo', arguments: { text: tag } });
    for (const request of requestsIn(log)) {
      expect(request).toMatchObject({
        sessionHeader: null,
        versionHeader: '2026-07-28',
        envelopeVersion: '2026-07-28',
      });
    }
  });

  it('cuts a slow call at its deadline and the closed stream reaches the server through the proxy', async () => {
    const tag = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_s', name: 'modern__slow', arguments: { ms: 20_000, tag } }] },
      { text: 'Too slow.' },
    ]);
    const agent = agentFor(session, { mcp: [proxied({ timeoutMs: 500 })] });

    const results = toolResults(await collect(agent.run('Be slow')));

    expect(results).toMatchObject([{ ok: false, error: { code: 'tool-timeout' } }]);
    const log = await eventually(proxiedLog, (seen) =>
      seen.some((entry) => entry.kind === 'cancelled' && entry.tag === tag),
    );
    expect(log).toContainEqual({ kind: 'cancelled', tag });
  });
});
