import { describe, expect, it } from 'vitest';
import { exposedToolNames } from '../../../src/worker/mcp/mcp-names';
import { mcpOutcome } from '../../../src/worker/mcp/mcp-results';
import { parseAgentConfig } from '../../../src/worker/services/config-schema';

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

describe('MCP tool names', () => {
  it('prefixes each tool with its server and keeps plain names as they are', () => {
    expect([...exposedToolNames('notes', ['echo', 'write_note']).values()]).toEqual([
      'notes__echo',
      'notes__write_note',
    ]);
  });

  it('keeps every name within 64 allowed characters, and long or odd names apart', () => {
    const long = 'a'.repeat(80);
    const names = exposedToolNames('server-with-a-long-name-of-32-ch', [
      `${long}1`,
      `${long}2`,
      'files.read',
      'files/read',
      'ünïcødé tool',
    ]);
    const exposed = [...names.values()];
    expect(exposed).toHaveLength(5);
    for (const name of exposed) expect(name).toMatch(TOOL_NAME);
    expect(new Set(exposed).size).toBe(5);
  });

  it('skips a tool listed twice rather than offering one name for two tools', () => {
    expect([...exposedToolNames('s', ['echo', 'echo']).entries()]).toEqual([['echo', 's__echo']]);
  });
});

describe('MCP results', () => {
  it('gives text as text, structured content as its JSON, and describes binary blocks by size', () => {
    expect(
      mcpOutcome('t', {
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toEqual({
      ok: true,
      output: 'a\nb',
      content: 'a\nb',
    });
    expect(mcpOutcome('t', { content: [], structuredContent: { n: 1 } })).toEqual({
      ok: true,
      output: { n: 1 },
      content: '{"n":1}',
    });
    const mixed = mcpOutcome('t', {
      content: [
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'x://b', blob: 'AAA=' } },
        { type: 'resource_link', uri: 'x://c', name: 'c' },
        { type: 'future-kind' },
      ],
    });
    expect(mixed).toMatchObject({
      ok: true,
      output: [
        { type: 'audio', mimeType: 'audio/wav', bytes: 3 },
        { type: 'resource', uri: 'x://b', bytes: 2 },
        { type: 'resource_link', uri: 'x://c', name: 'c' },
        { type: 'future-kind' },
      ],
    });
  });

  it('turns isError into a tool failure carrying the text, even with no text at all', () => {
    expect(
      mcpOutcome('t', { isError: true, content: [{ type: 'text', text: 'bad' }] }),
    ).toMatchObject({
      ok: false,
      error: { code: 'tool-failed', message: expect.stringContaining('bad') },
    });
    expect(mcpOutcome('t', { isError: true })).toMatchObject({
      ok: false,
      error: { code: 'tool-failed' },
    });
  });
});

describe('MCP server configuration in the agent worker', () => {
  const base = {
    model: { baseURL: 'http://127.0.0.1:1/v1', model: 'm' },
    pageTools: [],
    toolsets: [],
    limits: { maxSteps: 1, streamIdleTimeoutMs: 1_000, maxInputChars: 10 },
    memory: {
      database: 'd',
      window: { maxMessages: 1, maxTokens: 1 },
      summarize: false,
      maxMemoryTokens: 0,
      tools: false,
    },
    guardrails: { input: false, output: false, toolArguments: false },
  };
  const withMcp = (mcp: unknown) => () => parseAgentConfig({ ...base, mcp });

  it('accepts a server and refuses names that would break tool names, twins, and non-http URLs', () => {
    expect(withMcp([{ name: 'notes', url: 'http://127.0.0.1/mcp' }])()).toMatchObject({
      mcp: [{ name: 'notes' }],
    });
    for (const mcp of [
      [{ name: 'a__b', url: 'http://x/mcp' }],
      [{ name: 'a b', url: 'http://x/mcp' }],
      [{ name: 'x'.repeat(33), url: 'http://x/mcp' }],
      [{ name: 'notes', url: 'javascript:alert(1)' }],
      [{ name: 'notes', url: 'http://x/mcp', approval: 'sometimes' }],
      [
        { name: 'notes', url: 'http://x/mcp' },
        { name: 'notes', url: 'http://y/mcp' },
      ],
    ]) {
      expect(withMcp(mcp), JSON.stringify(mcp)).toThrow(
        expect.objectContaining({ code: 'invalid-options' }),
      );
    }
  });
});
