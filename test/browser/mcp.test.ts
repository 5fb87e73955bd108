import { type AgentEvent, isAirlockError, type McpServerConfig } from 'airlock-agents';
import { describe, expect, inject, it } from 'vitest';
import { agentFor, collect, readToolOutput, receivedBodies, scriptModel } from './support';

/**
 * The deadline of a call whose response stream is dropped and resumed. Firefox holds back a
 * GET of a URL while another GET of it is open (the standalone event stream), and resuming
 * is such a GET: held back, it got through after about 22 s, so a call resumed within this
 * deadline shows that the resuming GET went out at once (it takes 1-3 s in all engines).
 */
const RESUMED_CALL_DEADLINE_MS = 12_000;

/** A tenant of its own on the MCP test server, so tests never see each other's calls. */
function mcpTenant() {
  const tenant = `t-${crypto.randomUUID()}`;
  const origin = inject('mcpServerUrl');
  return {
    url: `${origin}/mcp?t=${tenant}`,
    /** What the server saw: calls, cancellations, closed streams and sessions. */
    async log(): Promise<string[]> {
      return (await fetch(`${origin}/control/${tenant}/log`)).json() as Promise<string[]>;
    },
    /** The server forgets the tenant's sessions, as after a restart. */
    async forgetSessions(): Promise<void> {
      await fetch(`${origin}/control/${tenant}/forget-sessions`, { method: 'POST' });
    },
    async addTool(name: string): Promise<void> {
      await fetch(`${origin}/control/${tenant}/add-tool`, {
        method: 'POST',
        body: JSON.stringify({ name }),
      });
    },
  };
}

type Tenant = ReturnType<typeof mcpTenant>;

function notesServer(tenant: Tenant, options: Partial<McpServerConfig> = {}): McpServerConfig {
  return { name: 'notes', url: tenant.url, approval: 'never', ...options };
}

/** Polls `read` until `accept` holds, for at most `ms`. */
async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, ms = 5_000) {
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

describe('MCP tools', () => {
  it('lists every page of the tools, names them server__tool and offers their input schema', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([{ text: 'Hello.' }]);
    const agent = agentFor(session, { mcp: [notesServer(tenant)], memory: { tools: false } });

    const names = await agent.ready;
    // The server pages its eight tools three at a time.
    expect(names).toEqual([
      'notes__echo',
      'notes__add',
      'notes__picture',
      'notes__readme',
      'notes__fail',
      'notes__slow',
      'notes__write_note',
      'notes__flaky_stream',
    ]);
    await agent.run('Hi').result;
    const [body] = await receivedBodies(session);
    const echo = body?.tools?.find((offered) => offered.function.name === 'notes__echo');
    expect(echo?.function.parameters).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string', maxLength: 200 } },
      required: ['text'],
    });
  });

  it('calls a tool and gives the model its text inside a tool_output element, audited', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'notes__echo', arguments: { text: 'hi there' } }] },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [notesServer(tenant)] });

    const events = await collect(agent.run('Echo hi there'));

    expect(toolResults(events)).toMatchObject([
      { ok: true, toolName: 'notes__echo', output: 'echo: hi there' },
    ]);
    const bodies = await receivedBodies(session);
    const toolMessage = bodies[1]?.messages.find((message) => message.role === 'tool');
    expect(readToolOutput(toolMessage?.content)).toMatchObject({
      tool: 'notes__echo',
      status: 'ok',
      body: 'echo: hi there',
    });
    expect(await tenant.log()).toContain('call:echo:{"text":"hi there"}');
    const audit = await agent.memory.toolCalls({ runId: (await agentRunId(events)) ?? '' });
    expect(audit).toMatchObject([{ toolName: 'notes__echo', outcome: 'ok' }]);
  });

  it('maps structured content, images and embedded resources to tool results', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_add', name: 'notes__add', arguments: { a: 2, b: 3 } },
          { id: 'call_pic', name: 'notes__picture', arguments: {} },
          { id: 'call_res', name: 'notes__readme', arguments: {} },
        ],
      },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [notesServer(tenant)] });

    // Results arrive as the calls settle; they run in parallel, so order them by call id.
    const results = toolResults(await collect(agent.run('Use them'))).sort((a, b) =>
      a.callId.localeCompare(b.callId),
    );

    expect(results).toMatchObject([
      { callId: 'call_add', ok: true, output: { sum: 5 } },
      {
        callId: 'call_pic',
        ok: true,
        output: [
          { type: 'text', text: 'A transparent pixel.' },
          { type: 'image', mimeType: 'image/png', bytes: 68 },
        ],
      },
      {
        callId: 'call_res',
        ok: true,
        output: [
          {
            type: 'resource',
            uri: 'notes://readme',
            mimeType: 'text/plain',
            text: 'Read me first.',
          },
        ],
      },
    ]);
    const bodies = await receivedBodies(session);
    const contents = bodies[1]?.messages
      .filter((message) => message.role === 'tool')
      .map((message) => readToolOutput(message.content).body);
    expect(JSON.parse(contents?.[0] ?? '')).toEqual({ sum: 5 });
    // The tool message names the image without its base64; the image itself follows the
    // step's tool results in a user message, as a page tool's images do.
    expect(contents?.[1]).not.toContain('iVBOR');
    const sent = bodies[1]?.messages ?? [];
    const afterTools = sent[sent.findLastIndex((message) => message.role === 'tool') + 1];
    expect(afterTools?.role).toBe('user');
    expect(JSON.stringify(afterTools?.content)).toContain('data:image/png;base64,iVBOR');
  });

  it('turns an isError result into a failed call the model can read', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_f', name: 'notes__fail', arguments: {} }] },
      { text: 'It failed.' },
    ]);
    const agent = agentFor(session, { mcp: [notesServer(tenant)] });

    const results = toolResults(await collect(agent.run('Try it')));

    expect(results).toMatchObject([
      { ok: false, error: { code: 'tool-failed', message: expect.stringContaining('on purpose') } },
    ]);
    const toolMessage = (await receivedBodies(session))[1]?.messages.find(
      (message) => message.role === 'tool',
    );
    expect(readToolOutput(toolMessage?.content).status).toBe('error');
  });

  it('cuts a slow tool at its deadline and the server sees the cancellation', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      {
        toolCalls: [{ id: 'call_s', name: 'notes__slow', arguments: { ms: 20_000, tag: 'late' } }],
      },
      { text: 'Too slow.' },
    ]);
    const agent = agentFor(session, { mcp: [notesServer(tenant, { timeoutMs: 300 })] });

    const results = toolResults(await collect(agent.run('Be slow')));

    expect(results).toMatchObject([{ ok: false, error: { code: 'tool-timeout' } }]);
    const log = await eventually(tenant.log, (seen) => seen.includes('cancelled:slow:late'));
    expect(log).toContain('cancelled:slow:late');
  });

  it('cancels a running call on the server when the run is aborted', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      {
        toolCalls: [{ id: 'call_s', name: 'notes__slow', arguments: { ms: 20_000, tag: 'abort' } }],
      },
      { text: 'never' },
    ]);
    const agent = agentFor(session, { mcp: [notesServer(tenant)] });
    const controller = new AbortController();
    const run = agent.run('Be slow', { signal: controller.signal });

    for await (const event of run) {
      if (event.type === 'tool-call') {
        await eventually(tenant.log, (seen) => seen.some((line) => line.startsWith('call:slow')));
        controller.abort();
      }
    }

    expect((await run.result).reason).toBe('aborted');
    const log = await eventually(tenant.log, (seen) => seen.includes('cancelled:slow:abort'));
    expect(log).toContain('cancelled:slow:abort');
  });

  it('offers a tool the server adds while connected, after tools/list_changed', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel(Array.from({ length: 100 }, () => ({ text: 'ok' })));
    const agent = agentFor(session, { mcp: [notesServer(tenant)], memory: { tools: false } });
    await agent.ready;

    await tenant.addTool('late_tool');
    const offered = await eventually(
      async () => {
        await agent.run('Which tools?').result;
        const bodies = await receivedBodies(session);
        return bodies.at(-1)?.tools?.map((offer) => offer.function.name) ?? [];
      },
      (names) => names.includes('notes__late_tool'),
    );

    expect(offered).toContain('notes__late_tool');
    expect(offered).toContain('notes__echo');
  });

  it('resumes a response stream the server closed mid-call and gets the answer', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_d', name: 'notes__flaky_stream', arguments: { tag: 'drop' } }] },
      { text: 'Got it.' },
    ]);
    const agent = agentFor(session, {
      mcp: [notesServer(tenant, { timeoutMs: RESUMED_CALL_DEADLINE_MS })],
    });

    const results = toolResults(await collect(agent.run('Try the flaky one')));

    expect(await tenant.log()).toContain('stream-closed:drop');
    expect(results).toMatchObject([{ ok: true, output: 'answered after the stream was resumed' }]);
  });

  it('opens a new session when the server no longer knows the old one, and the call goes through', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'notes__echo', arguments: { text: 'after restart' } }] },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [notesServer(tenant)] });
    await agent.ready;

    await tenant.forgetSessions();
    const results = toolResults(await collect(agent.run('Echo')));

    expect(results).toMatchObject([{ ok: true, output: 'echo: after restart' }]);
    expect((await tenant.log()).filter((line) => line.startsWith('call:'))).toEqual([
      'call:echo:{"text":"after restart"}',
    ]);
  });

  it('fails ready with mcp-unavailable naming a server that is down at start', async () => {
    const session = await scriptModel([]);
    const agent = agentFor(session, {
      mcp: [{ name: 'gone', url: inject('mcpDownUrl'), connectTimeoutMs: 5_000 }],
    });

    const error = await agent.ready.then(
      () => undefined,
      (failure: unknown) => failure,
    );

    expect(isAirlockError(error, 'mcp-unavailable')).toBe(true);
    expect(error).toMatchObject({ details: { server: 'gone' } });
    expect((error as Error).message).toContain('"gone"');
  });

  it('never sends a call whose arguments do not fit the tool schema', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_bad', name: 'notes__echo', arguments: { text: 42 } }] },
      { text: 'Sorry.' },
    ]);
    const agent = agentFor(session, { mcp: [notesServer(tenant)] });

    const results = toolResults(await collect(agent.run('Echo a number')));

    expect(results).toMatchObject([{ ok: false, error: { code: 'tool-invalid-arguments' } }]);
    expect((await tenant.log()).filter((line) => line.startsWith('call:'))).toEqual([]);
  });

  it('asks for approval by default, even for tools the server marks read-only', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_e', name: 'notes__echo', arguments: { text: 'x' } }] },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [{ name: 'notes', url: tenant.url }] });
    const run = agent.run('Echo x');

    for await (const event of run) {
      if (event.type === 'approval-request') {
        expect(event.toolName).toBe('notes__echo');
        expect(await tenant.log()).toEqual([]);
        await run.approve(event.approvalId);
      }
    }

    expect(await tenant.log()).toContain('call:echo:{"text":"x"}');
  });

  it('skips approval for read-only tools when the app allows it, and only for them', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_e', name: 'notes__echo', arguments: { text: 'x' } },
          { id: 'call_w', name: 'notes__write_note', arguments: { title: 'T' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, {
      mcp: [{ name: 'notes', url: tenant.url, approval: 'unless-read-only' }],
    });
    const run = agent.run('Echo and write');
    const asked: string[] = [];

    for await (const event of run) {
      if (event.type === 'approval-request') {
        asked.push(event.toolName);
        await run.reject(event.approvalId, 'not now');
      }
    }

    expect(asked).toEqual(['notes__write_note']);
    const calls = (await tenant.log()).filter((line) => line.startsWith('call:'));
    expect(calls).toEqual(['call:echo:{"text":"x"}']);
  });

  it("offers only the tools in a server's allowlist", async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_w', name: 'notes__write_note', arguments: { title: 'T' } }] },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, {
      mcp: [notesServer(tenant, { allowedTools: ['echo', 'add'] })],
      memory: { tools: false },
    });

    expect(await agent.ready).toEqual(['notes__echo', 'notes__add']);
    const results = toolResults(await collect(agent.run('Write')));

    expect(results).toMatchObject([{ ok: false, error: { code: 'tool-not-found' } }]);
    expect((await tenant.log()).filter((line) => line.startsWith('call:'))).toEqual([]);
  });

  it('holds MCP calls to the guardrails, the tool-call budget and the output cap like any tool', async () => {
    const tenant = mcpTenant();
    const long = 'x'.repeat(150);
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_block', name: 'notes__echo', arguments: { text: 'forbidden' } },
          { id: 'call_long', name: 'notes__echo', arguments: { text: long } },
        ],
      },
      { toolCalls: [{ id: 'call_over', name: 'notes__echo', arguments: { text: 'one more' } }] },
      { text: 'never' },
    ]);
    const agent = agentFor(session, {
      mcp: [notesServer(tenant, { maxOutputChars: 40 })],
      budgets: { run: { toolCalls: 1 } },
      guardrails: {
        toolArguments: ({ toolName, arguments: args }) =>
          toolName === 'notes__echo' && (args as { text: string }).text === 'forbidden'
            ? { action: 'block', reason: 'not that word' }
            : { action: 'allow' },
      },
    });

    const run = agent.run('Echo things');
    const results = toolResults(await collect(run));

    expect(results).toMatchObject([
      { callId: 'call_block', ok: false, error: { code: 'tool-blocked' } },
      { callId: 'call_long', ok: true },
      { callId: 'call_over', ok: false, error: { code: 'tool-budget-exceeded' } },
    ]);
    const cut = results[1]?.ok ? String(results[1].output) : '';
    expect(cut.startsWith('echo: xxx')).toBe(true);
    expect(cut).not.toContain(long);
    await expect(run.result).rejects.toMatchObject({ code: 'budget-exceeded' });
    // Only the call that passed every check reached the server.
    expect((await tenant.log()).filter((line) => line.startsWith('call:'))).toEqual([
      `call:echo:{"text":"${long}"}`,
    ]);
  });

  it('ends the MCP session when the agent is disposed', async () => {
    const tenant = mcpTenant();
    const session = await scriptModel([]);
    const agent = agentFor(session, { mcp: [notesServer(tenant)] });
    await agent.ready;

    agent.dispose();

    const log = await eventually(tenant.log, (seen) => seen.includes('session-closed'));
    expect(log).toContain('session-closed');
  });
});

async function agentRunId(events: AgentEvent[]): Promise<string | undefined> {
  const start = events.find((event) => event.type === 'run-start');
  return start?.type === 'run-start' ? start.runId : undefined;
}

describe('MCP tools through the proxy route', () => {
  const proxied = (options: Partial<McpServerConfig> = {}): McpServerConfig => ({
    name: 'notes',
    url: inject('mcpProxyUrl'),
    approval: 'never',
    ...options,
  });
  const secretLog = async (): Promise<string[]> =>
    (await fetch(`${inject('mcpServerUrl')}/control/secret/log`)).json() as Promise<string[]>;

  it('lists and calls tools with the credentials the proxy adds', async () => {
    const tag = crypto.randomUUID();
    const session = await scriptModel([
      {
        toolCalls: [
          { id: 'call_1', name: 'notes__echo', arguments: { text: tag } },
          { id: 'call_2', name: 'notes__add', arguments: { a: 1, b: 2 } },
        ],
      },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [proxied()], memory: { tools: false } });

    // The proxy lists only its allowedTools for the server: write_note is the server's, not offered.
    const offered = await agent.ready;
    expect(offered).toEqual(
      expect.arrayContaining(['notes__echo', 'notes__add', 'notes__slow', 'notes__flaky_stream']),
    );
    expect(offered).not.toContain('notes__write_note');
    const results = toolResults(await collect(agent.run('Echo')));

    expect(results).toMatchObject([
      { ok: true, output: `echo: ${tag}` },
      { ok: true, output: { sum: 3 } },
    ]);
    expect(await secretLog()).toContain(`call:echo:{"text":"${tag}"}`);
  });

  it('cuts a slow tool at its deadline and the cancellation reaches the server through the proxy', async () => {
    const tag = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_s', name: 'notes__slow', arguments: { ms: 20_000, tag } }] },
      { text: 'Too slow.' },
    ]);
    const agent = agentFor(session, { mcp: [proxied({ timeoutMs: 300 })] });

    const results = toolResults(await collect(agent.run('Be slow')));

    expect(results).toMatchObject([{ ok: false, error: { code: 'tool-timeout' } }]);
    const log = await eventually(secretLog, (seen) => seen.includes(`cancelled:slow:${tag}`));
    expect(log).toContain(`cancelled:slow:${tag}`);
  });

  it('resumes a dropped response stream through the proxy (Last-Event-ID passes)', async () => {
    const tag = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_d', name: 'notes__flaky_stream', arguments: { tag } }] },
      { text: 'Got it.' },
    ]);
    const agent = agentFor(session, {
      mcp: [{ ...proxied(), timeoutMs: RESUMED_CALL_DEADLINE_MS }],
    });

    const results = toolResults(await collect(agent.run('Try the flaky one')));

    expect(await secretLog()).toContain(`stream-closed:${tag}`);
    expect(results).toMatchObject([{ ok: true, output: 'answered after the stream was resumed' }]);
  });

  it("never offers a tool outside the proxy's allowedTools, and a call of it reaches no server", async () => {
    const tag = crypto.randomUUID();
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_w', name: 'notes__write_note', arguments: { title: tag } }] },
      { text: 'Refused.' },
    ]);
    // The page asks for every tool; the proxy lists (and lets be called) only echo, add, slow and flaky_stream.
    const agent = agentFor(session, { mcp: [proxied()] });

    const results = toolResults(await collect(agent.run('Write a note')));

    expect(results).toMatchObject([{ ok: false, error: { code: 'tool-not-found' } }]);
    expect((await secretLog()).some((line) => line.includes(tag))).toBe(false);
  });

  it('fails ready with mcp-unavailable for a name the proxy does not serve', async () => {
    const session = await scriptModel([]);
    const url = inject('mcpProxyUrl').replace(/notes$/, 'unknown');
    const agent = agentFor(session, { mcp: [{ name: 'unknown', url }] });

    await expect(agent.ready).rejects.toMatchObject({
      code: 'mcp-unavailable',
      details: { server: 'unknown' },
    });
  });
});
