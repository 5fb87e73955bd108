import type { AgentEvent, McpServerConfig } from 'airlock-agents';
import { describe, expect, inject, it } from 'vitest';
import { agentFor, collect, receivedBodies, scriptModel } from './support';

/**
 * The longest a memory call of the agent may take while a hostile MCP tool is being
 * checked. A check that ran unbounded froze the worker for seconds to hours; a bounded
 * one takes a fraction of a second, so the margin is wide even on a loaded machine.
 */
const PROMPT_ANSWER_MS = 4_000;

/** A tenant of the MCP test server serving the given tool set. */
function hostileTenant(tools: 'hostile' | 'flood' | 'default') {
  const tenant = `t-${crypto.randomUUID()}`;
  const origin = inject('mcpServerUrl');
  return {
    url: `${origin}/mcp?t=${tenant}&tools=${tools}`,
    async calls(): Promise<string[]> {
      const log = (await (await fetch(`${origin}/control/${tenant}/log`)).json()) as string[];
      return log.filter((line) => line.startsWith('call:'));
    },
  };
}

function server(url: string, options: Partial<McpServerConfig> = {}): McpServerConfig {
  return { name: 'notes', url, approval: 'never', ...options };
}

type ToolResult = Extract<AgentEvent, { type: 'tool-result' }>;
type Warning = Extract<AgentEvent, { type: 'warning' }>;

function toolResults(events: AgentEvent[]): ToolResult[] {
  return events.filter((event): event is ToolResult => event.type === 'tool-result');
}

function warnings(events: AgentEvent[]): Warning[] {
  return events.filter((event): event is Warning => event.type === 'warning');
}

/**
 * Asks `probe` again and again while `running` goes on (15 s at most) and returns the
 * longest wait for an answer; a probe unanswered after twice the allowed time counts as that.
 */
async function slowestAnswerWhile(probe: () => Promise<unknown>, running: Promise<unknown>) {
  let settled = false;
  void running.finally(() => {
    settled = true;
  });
  const until = performance.now() + 15_000;
  let slowest = 0;
  do {
    const start = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      probe(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, PROMPT_ANSWER_MS * 2);
      }),
    ]);
    clearTimeout(timer);
    slowest = Math.max(slowest, performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 50));
  } while (!settled && performance.now() < until);
  return slowest;
}

describe('hostile MCP servers', () => {
  it('a catastrophic-backtracking pattern in a tool schema does not freeze the agent worker, and the call is refused before the server sees it', async () => {
    const tenant = hostileTenant('hostile');
    const session = await scriptModel([
      {
        toolCalls: [
          // 40 characters: hours of backtracking for `^(a+)+$` in a backtracking engine.
          { id: 'call_1', name: 'notes__match_name', arguments: { name: `${'a'.repeat(40)}!` } },
        ],
      },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [server(tenant.url)] });
    await agent.ready;

    const events = collect(agent.run('Match it'));
    const slowest = await slowestAnswerWhile(() => agent.memory.listConversations(), events);

    expect(slowest).toBeLessThan(PROMPT_ANSWER_MS);
    expect(toolResults(await events)).toMatchObject([
      { ok: false, error: { code: 'tool-invalid-arguments' } },
    ]);
    expect(await tenant.calls()).toEqual([]);
  });

  it('a schema whose checks double at every level is cut at its time bound as a typed tool error, and the agent keeps answering', async () => {
    const tenant = hostileTenant('hostile');
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'notes__nested_checks', arguments: { n: 1 } }] },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [server(tenant.url)] });
    await agent.ready;

    const events = collect(agent.run('Check it'));
    const slowest = await slowestAnswerWhile(() => agent.memory.listConversations(), events);

    expect(slowest).toBeLessThan(PROMPT_ANSWER_MS);
    expect(toolResults(await events)).toMatchObject([
      { ok: false, error: { code: 'tool-schema-refused' } },
    ]);
    expect(await tenant.calls()).toEqual([]);
  });

  it("a format whose regular expression backtracks on the server's structured content does not freeze the agent worker", async () => {
    const tenant = hostileTenant('hostile');
    const session = await scriptModel([
      { toolCalls: [{ id: 'call_1', name: 'notes__link', arguments: {} }] },
      { text: 'Done.' },
    ]);
    const agent = agentFor(session, { mcp: [server(tenant.url)] });
    await agent.ready;

    const events = collect(agent.run('Get the link'));
    const slowest = await slowestAnswerWhile(() => agent.memory.listConversations(), events);

    expect(slowest).toBeLessThan(PROMPT_ANSWER_MS);
    // `format` is an annotation (JSON Schema 2020-12): the content is checked, its format is not.
    expect(toolResults(await events)).toMatchObject([
      { ok: true, output: { url: `http://${'a'.repeat(40)}!` } },
    ]);
  });

  it('refuses at listing a tool whose pattern a linear-time engine cannot express, and every run warns naming it', async () => {
    const tenant = hostileTenant('hostile');
    const session = await scriptModel([{ text: 'Hello.' }, { text: 'Hello again.' }]);
    const agent = agentFor(session, { mcp: [server(tenant.url)], memory: { tools: false } });

    const names = await agent.ready;
    const runs = [await collect(agent.run('Hi')), await collect(agent.run('Hi again'))];

    expect(names).toEqual([
      'notes__echo',
      'notes__match_name',
      'notes__nested_checks',
      'notes__link',
    ]);
    const [body] = await receivedBodies(session);
    expect(body?.tools?.map((offered) => offered.function.name)).not.toContain('notes__not_admin');
    for (const events of runs) {
      expect(warnings(events)).toMatchObject([
        {
          code: 'mcp-tools-dropped',
          details: { server: 'notes', dropped: [{ tool: 'not_admin', reason: 'schema-refused' }] },
        },
      ]);
      expect(warnings(events)[0]?.message).toContain('not_admin');
    }
  });

  it('an MCP server listing 10,000 tools makes a bounded model request and a warning naming the dropped tools', async () => {
    const tenant = hostileTenant('flood');
    const session = await scriptModel([{ text: 'Hello.' }]);
    const agent = agentFor(session, {
      mcp: [server(tenant.url, { connectTimeoutMs: 30_000 })],
      memory: { tools: false },
    });

    const names = await agent.ready;
    const events = await collect(agent.run('Hi'));

    expect(names).toHaveLength(100);
    expect(names.at(-1)).toBe('notes__tool_99');
    const [request] = await session.requests();
    const [body] = await receivedBodies(session);
    expect(body?.tools).toHaveLength(100);
    // 10,000 tools made a request of megabytes; 100 of them, with their schemas, stay small.
    expect(JSON.stringify(request?.body).length).toBeLessThan(400_000);
    const [warning] = warnings(events);
    expect(warning).toMatchObject({
      code: 'mcp-tools-dropped',
      details: { server: 'notes', total: 9_900 },
    });
    expect(warning?.details?.dropped).toContainEqual({ tool: 'tool_100', reason: 'tool-count' });
    expect(warning?.message).toContain('tool_100');
  });

  it("keeps a server's tools within its own maxTools and maxSchemaChars, in listing order", async () => {
    const byCount = hostileTenant('default');
    const bySize = hostileTenant('default');
    const session = await scriptModel([{ text: 'Hello.' }]);
    const agent = agentFor(session, {
      mcp: [
        server(byCount.url, { name: 'few', maxTools: 2 }),
        // Room for echo (138 characters of description and schemas) and picture (66), not add (226).
        server(bySize.url, { name: 'small', maxSchemaChars: 250 }),
      ],
      memory: { tools: false },
    });

    const names = await agent.ready;
    const events = await collect(agent.run('Hi'));

    expect(names.filter((name) => name.startsWith('few__'))).toEqual(['few__echo', 'few__add']);
    expect(names.filter((name) => name.startsWith('small__'))).toEqual([
      'small__echo',
      'small__picture',
    ]);
    const dropped = warnings(events).map((warning) => warning.details);
    expect(dropped).toContainEqual(
      expect.objectContaining({
        server: 'few',
        dropped: expect.arrayContaining([{ tool: 'picture', reason: 'tool-count' }]),
      }),
    );
    expect(dropped).toContainEqual(
      expect.objectContaining({
        server: 'small',
        dropped: expect.arrayContaining([{ tool: 'add', reason: 'schema-size' }]),
      }),
    );
  });
});
