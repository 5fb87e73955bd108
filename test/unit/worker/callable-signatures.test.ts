import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../../src/protocol/tools';
import { withCallableSignatures } from '../../../src/worker/tools/callable-signatures';

const spec = (
  name: string,
  description: string,
  parameters: Record<string, unknown>,
): ToolSpec => ({
  name,
  description,
  parameters,
  policy: { approval: 'never' },
});

describe('the functions a code tool lists', () => {
  it('renders each granted tool as an async function with argument types from its JSON Schema', () => {
    const codeTool = spec('run_js', 'Runs JavaScript.', {});
    const search = spec('search', 'Searches notes.\nSecond line is left out.', {
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { type: 'integer' },
        tags: { type: 'array', items: { type: 'string' } },
        order: { enum: ['new', 'old'] },
        'odd-key': { anyOf: [{ type: 'string' }, { type: 'null' }] },
        filter: { type: 'object', properties: { after: { type: 'string' } }, required: ['after'] },
      },
      required: ['query'],
    });

    const description = withCallableSignatures(codeTool, [search]);

    expect(description.startsWith('Runs JavaScript.\n\n')).toBe(true);
    expect(description).toContain(
      '- await tools.search(args: { query: string; limit?: number; tags?: Array<string>; order?: "new" | "old"; "odd-key"?: string | null; filter?: { after: string } }): Searches notes.',
    );
    expect(description).not.toContain('Second line');
  });

  it('says unknown for schema parts it cannot read, and leaves a tool without grants as it was', () => {
    const codeTool = spec('run_js', 'Runs JavaScript.', {});
    const odd = spec('odd', '', { type: 'object', properties: { x: { not: {} }, y: 42 } });

    expect(withCallableSignatures(codeTool, [odd])).toContain(
      '- await tools.odd(args: { x?: unknown; y?: unknown })',
    );
    expect(withCallableSignatures(codeTool, [])).toBe('Runs JavaScript.');
  });
});

describe('the functions a code tool lists, for a hostile schema', () => {
  it('renders a type list that repeats a type at every level once per distinct type', () => {
    // Twelve 'object's at each of five levels made 12^5 renderings of the innermost one.
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 5; level++) {
      schema = { type: Array(12).fill('object'), properties: { inner: schema } };
    }
    const description = withCallableSignatures(spec('run_js', 'Runs JavaScript.', {}), [
      spec('nested', 'A hostile MCP tool.', schema),
    ]);

    expect(description.length).toBeLessThan(2_000);
    expect(description).toContain('await tools.nested(args: { inner?: { inner?: { inner?:');
  });
});
