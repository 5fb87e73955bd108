import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { codeTool } from '../../../src/code/code-tool';
import type { KnowledgeBase } from '../../../src/knowledge/knowledge-base';
import { MAX_MEMORY_KEY_CHARS } from '../../../src/store/memory-rules';
import { createMemoryStore } from '../../../src/store/memory-store';
import type { Tool } from '../../../src/tools/define-tool';
import type { ToolSchema } from '../../../src/tools/standard-schema';
import { knowledgeTools } from '../../../src/worker/tools/knowledge-tools';
import { memoryTools } from '../../../src/worker/tools/memory-tools';

// The built-in tools' parameters as they were written with classic zod, before `zod/mini`:
// what the model is sent and what it is told about bad arguments must not have changed.
const K = MAX_MEMORY_KEY_CHARS;
const CLASSIC = {
  save_memory: z.object({
    key: z.string().min(1).max(K).describe('A short label, e.g. "user.name"'),
    content: z.string().min(1).max(2_000).describe('What to remember'),
    importance: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe('0 to 1; important memories come first'),
    scope: z
      .enum(['conversation', 'lasting'])
      .optional()
      .describe(
        '"lasting" (default) follows the user into new conversations; "conversation" stays here',
      ),
    expiresInSeconds: z.number().int().positive().optional().describe('Forget it after this long'),
  }),
  recall_memories: z.object({
    key: z.string().max(K).optional().describe('An exact key'),
    query: z.string().max(1_000).optional().describe('Words to look for in keys and contents'),
  }),
  forget_memory: z.object({ key: z.string().min(1).max(K) }),
  search_knowledge: z.object({
    query: z.string().min(1).max(1_000).describe('What to look for, in a few words or a question'),
  }),
  run_js: z.object({
    code: z
      .string()
      .describe(
        'JavaScript, run as the body of an async function: use `await` and `return` the result.',
      ),
  }),
};

function builtInTools(): Tool[] {
  const store = createMemoryStore({ name: `mini-parameters-${crypto.randomUUID()}` });
  return [
    ...memoryTools(store, { conversation: 'conversation:c1', lasting: 'global' }),
    ...knowledgeTools({} as KnowledgeBase, async () => {}),
    codeTool({ name: 'run_js', description: 'Runs JavaScript.', isolation: 'worker' }),
  ];
}

function classicOf(name: string) {
  const schema = CLASSIC[name as keyof typeof CLASSIC];
  if (!schema) throw new Error(`no classic schema for ${name}`);
  return schema;
}

async function issuesOf(schema: ToolSchema, value: unknown) {
  const result = await schema['~standard'].validate(value);
  return result.issues?.map(({ message, path }) => ({ message, path })) ?? 'valid';
}

const long = (n: number) => 'x'.repeat(n);
// Good and bad arguments of every kind: wrong types, forged fields, bounds, huge input.
const ARGUMENTS: unknown[] = [
  {},
  null,
  'key',
  [],
  { key: 'k', content: 'c' },
  { key: '', content: '' },
  { key: long(K), content: long(2_000) },
  { key: long(K + 1), content: long(2_001) },
  { key: long(1_000_000), content: 'c' },
  { key: 7, content: ['c'] },
  { key: 'k', content: 'c', importance: 1.5, scope: 'forever', expiresInSeconds: 0.5 },
  { key: 'k', content: 'c', importance: 0, scope: 'lasting', expiresInSeconds: 2 ** 53 },
  { key: 'k', content: 'c', expiresInSeconds: -1, extra: 'dropped' },
  { key: 'k', content: 'c', expiresInSeconds: Number.NaN, importance: '1' },
  { query: '' },
  { query: long(1_001) },
  { query: 'what', key: undefined },
  { code: 'return 1' },
  { code: 42 },
  { __proto__: { key: 'k', content: 'c' } },
];

describe('the built-in tools written with zod/mini', () => {
  it('send the model the JSON Schema their classic zod schemas made', () => {
    const tools = builtInTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(CLASSIC).sort());
    for (const tool of tools) {
      const { $schema: _dialect, ...expected } = classicOf(tool.name)['~standard'].jsonSchema.input(
        { target: 'draft-07' },
      );
      expect(tool.spec.parameters, tool.name).toEqual(expected);
    }
  });

  it('accept and refuse the same arguments, with the same messages and paths', async () => {
    for (const tool of builtInTools()) {
      const classic = classicOf(tool.name) as unknown as ToolSchema;
      for (const value of ARGUMENTS) {
        expect(
          await issuesOf(tool.parameters, value),
          `${tool.name} ${JSON.stringify(value)}`,
        ).toEqual(await issuesOf(classic, value));
      }
    }
  });

  it('parse to the same values (extra fields dropped)', async () => {
    const tool = builtInTools().find((candidate) => candidate.name === 'save_memory');
    const value = { key: 'k', content: 'c', importance: 0.5, extra: 'dropped' };
    expect(await tool?.parameters['~standard'].validate(value)).toEqual(
      await classicOf('save_memory')['~standard'].validate(value),
    );
  });
});
