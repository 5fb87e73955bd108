import { describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../../src/protocol/mcp';
import {
  droppedToolsWarning,
  type ListedTool,
  offerTools,
} from '../../../src/worker/mcp/mcp-tool-list';
import { prepareSchemaCheck, type SchemaCheck } from '../../../src/worker/mcp/schema-check';

/** A check prepared from `schema`, failing the test when the schema is refused. */
async function checkOf(schema: unknown, options = {}): Promise<SchemaCheck> {
  const prepared = await prepareSchemaCheck(schema, options);
  if (!prepared.ok) throw new Error(`refused: ${prepared.reason}`);
  return prepared.check;
}

/** A clock that moves a millisecond each time it is read: time passes only as the check works. */
function steppingClock() {
  let now = 0;
  return () => {
    now += 1;
    return now;
  };
}

/** `allOf`s whose every branch refers twice to the next level: 2^depth checks of a valid value. */
function doublingSchema(depth: number) {
  const $defs: Record<string, unknown> = { [`l${depth}`]: { type: 'number' } };
  for (let level = 0; level < depth; level++) {
    const next = { $ref: `#/$defs/l${level + 1}` };
    $defs[`l${level}`] = { allOf: [next, next] };
  }
  return { $defs, $ref: '#/$defs/l0' };
}

describe('checks against untrusted JSON Schemas', () => {
  it('checks a catastrophic-backtracking pattern in linear time', async () => {
    const check = await checkOf({ type: 'string', pattern: '^(a+)+$' });

    // Hours for a backtracking engine; the linear one answers at once, both ways.
    expect(check(`${'a'.repeat(5_000)}!`)).toMatchObject({ outcome: 'invalid' });
    expect(check('a'.repeat(5_000))).toEqual({ outcome: 'valid' });
  });

  it('matches patterns of patternProperties and propertyNames with the linear engine', async () => {
    const check = await checkOf({
      type: 'object',
      patternProperties: { '^(x+)+$': { type: 'number' } },
      propertyNames: { pattern: '^(x+)+y?$' },
    });

    expect(check({ xxx: 1 })).toEqual({ outcome: 'valid' });
    expect(check({ xxx: 'one' })).toMatchObject({ outcome: 'invalid' });
    expect(check({ [`${'x'.repeat(5_000)}!`]: 1 })).toMatchObject({ outcome: 'invalid' });
  });

  it('refuses a schema whose pattern the linear engine cannot express, naming the pattern', async () => {
    for (const pattern of ['^(?!admin$).*$', '(a)\\1', '(?<=a)b']) {
      const prepared = await prepareSchemaCheck({ type: 'string', pattern });
      expect(prepared).toMatchObject({ ok: false });
      expect(prepared.ok ? '' : prepared.reason).toContain(JSON.stringify(pattern));
    }
  });

  it('refuses a pattern that is not a regular expression, or a huge one', async () => {
    await expect(prepareSchemaCheck({ pattern: '(' })).resolves.toMatchObject({ ok: false });
    await expect(prepareSchemaCheck({ pattern: 'a'.repeat(1_001) })).resolves.toMatchObject({
      ok: false,
    });
  });

  it('refuses a pattern hidden where only a $ref reaches it', async () => {
    const prepared = await prepareSchemaCheck({
      'x-hidden': { pattern: '^(?=a)' },
      properties: { q: { $ref: '#/x-hidden' } },
    });
    expect(prepared).toMatchObject({ ok: false });
  });

  it('cuts a check whose allOfs double at every level at its time bound, as refused', async () => {
    const check = await checkOf(doublingSchema(40), { now: steppingClock(), budgetMs: 200 });

    expect(check(1)).toEqual({
      outcome: 'refused',
      message: 'the check took longer than 200 ms',
    });
  });

  it('cuts a quadratic uniqueItems check of a huge array at its time bound', async () => {
    const check = await checkOf({ type: 'array', uniqueItems: true }, { now: steppingClock() });
    const distinct = Array.from({ length: 200_000 }, (_, index) => index);

    expect(check(distinct)).toMatchObject({ outcome: 'refused' });
    // A small array is checked as before.
    expect(check([1, 2, 3])).toEqual({ outcome: 'valid' });
    expect(check([1, 2, 1])).toMatchObject({ outcome: 'invalid' });
  });

  it('cuts a match whose string times pattern is too much work', async () => {
    const check = await checkOf({ type: 'string', pattern: `^${'[a-z]'.repeat(100)}` });

    expect(check('a'.repeat(200_000))).toMatchObject({ outcome: 'refused' });
  });

  it('treats format as an annotation, even one whose own expression backtracks', async () => {
    const check = await checkOf({
      type: 'object',
      // A property named format is a property like any other.
      properties: { url: { type: 'string', format: 'url' }, format: { enum: ['csv', 'json'] } },
    });

    expect(check({ url: `http://${'a'.repeat(60)}!` })).toEqual({ outcome: 'valid' });
    expect(check({ format: 'csv' })).toEqual({ outcome: 'valid' });
    expect(check({ format: 'pdf' })).toMatchObject({ outcome: 'invalid' });
  });

  it('refuses, rather than throws, when the schema is broken or the value too deep', async () => {
    const unresolved = await checkOf({ properties: { q: { $ref: '#/nowhere' } } });
    expect(unresolved({ q: 1 })).toMatchObject({ outcome: 'refused' });

    const recursive = await checkOf({
      $defs: { n: { properties: { n: { $ref: '#/$defs/n' } } } },
      $ref: '#/$defs/n',
    });
    let deep: unknown = {};
    for (let depth = 0; depth < 20_000; depth++) deep = { n: deep };
    expect(recursive(deep)).toMatchObject({ outcome: 'refused' });
  });

  it('checks ordinary schemas as before: types, required, enums of objects, $defs', async () => {
    const check = await checkOf({
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
      properties: {
        at: { $ref: '#/$defs/point' },
        mode: { enum: [{ kind: 'a', format: 'x' }, 'plain'] },
        id: { type: 'string', pattern: '^[0-9a-f]{8}$' },
      },
      required: ['at'],
      additionalProperties: false,
    });

    expect(check({ at: { x: 1 }, id: '0123abcd', mode: 'plain' })).toEqual({ outcome: 'valid' });
    expect(check({ at: { x: 1 }, mode: { kind: 'a', format: 'x' } })).toEqual({ outcome: 'valid' });
    expect(check({ at: { x: 'one' } })).toMatchObject({ outcome: 'invalid' });
    expect(check({ at: { x: 1 }, id: 'zz' })).toMatchObject({ outcome: 'invalid' });
    expect(check({ at: { x: 1 }, extra: true })).toMatchObject({ outcome: 'invalid' });
    expect(check({})).toMatchObject({ outcome: 'invalid', message: expect.stringContaining('at') });
  });

  it('leaves the global RegExp as it was, even after a check that failed', async () => {
    const check = await checkOf({ properties: { q: { $ref: '#/nowhere' }, p: { pattern: 'a' } } });
    check({ q: 1, p: 'a' });

    expect(globalThis.RegExp).toBe(/a/.constructor);
  });
});

describe('caps on what an MCP server lists', () => {
  const config: McpServerConfig = { name: 'flood', url: 'http://127.0.0.1/mcp' };
  const tools = (count: number, schemaChars = 0): ListedTool[] =>
    Array.from({ length: count }, (_, index) => ({
      name: `tool_${index}`,
      description: 'A tool.',
      inputSchema: { type: 'object', description: 'x'.repeat(schemaChars) },
    }));

  it('keeps the first 100 of 10,000 tools by default and names the rest in a warning', async () => {
    const { specs, dropped } = await offerTools(config, tools(10_000));

    expect(specs).toHaveLength(100);
    expect(specs.at(-1)?.name).toBe('flood__tool_99');
    expect(dropped).toHaveLength(9_900);
    const warning = droppedToolsWarning('flood', dropped);
    expect(warning?.details).toMatchObject({ server: 'flood', total: 9_900 });
    expect(warning?.details.dropped).toHaveLength(100);
    expect(warning?.message).toContain('"tool_100" (over maxTools 100)');
    expect(warning?.message).toContain('and 9880 more');
  });

  it('drops, in listing order, the tools past maxSchemaChars and keeps smaller ones after', async () => {
    const listed = [...tools(3, 1_000), { ...tools(1, 10)[0], name: 'small' } as ListedTool];
    const { specs, dropped } = await offerTools({ ...config, maxSchemaChars: 2_200 }, listed);

    expect(specs.map((spec) => spec.name)).toEqual([
      'flood__tool_0',
      'flood__tool_1',
      'flood__small',
    ]);
    expect(dropped.map(({ tool, reason }) => ({ tool, reason }))).toEqual([
      { tool: 'tool_2', reason: 'schema-size' },
    ]);
  });

  it('drops a tool whose input or output schema cannot be checked, and offers the others', async () => {
    const listed: ListedTool[] = [
      {
        name: 'lookahead',
        inputSchema: { type: 'object', properties: { q: { pattern: '(?!x)' } } },
      },
      {
        name: 'bad_output',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object', properties: { q: { pattern: '(a)\\1' } } },
      },
      { name: 'fine', inputSchema: { type: 'object' } },
    ];
    const { specs, dropped } = await offerTools(config, listed);

    expect(specs.map((spec) => spec.name)).toEqual(['flood__fine']);
    expect(dropped.map(({ tool, reason }) => ({ tool, reason }))).toEqual([
      { tool: 'lookahead', reason: 'schema-refused' },
      { tool: 'bad_output', reason: 'schema-refused' },
    ]);
  });

  it('counts only what the allowlist lets through', async () => {
    const { specs, dropped } = await offerTools(
      { ...config, allowedTools: ['tool_5000', 'tool_9999'], maxTools: 1 },
      tools(10_000),
    );

    expect(specs.map((spec) => spec.name)).toEqual(['flood__tool_5000']);
    expect(dropped).toMatchObject([{ tool: 'tool_9999', reason: 'tool-count' }]);
    expect(droppedToolsWarning('flood', [])).toBeUndefined();
  });
});
