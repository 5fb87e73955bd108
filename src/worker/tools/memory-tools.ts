import { z } from 'zod/mini';
import { MAX_MEMORY_KEY_CHARS } from '../../store/memory-rules';
import type { ConversationStore, MemoryScope } from '../../store/store';
import type { Tool } from '../../tools/define-tool';
import { miniParameters } from '../../tools/mini-parameters';
import { builtInTool } from './built-in-tool';

/** Where the memory tools of one run read and write. */
export interface MemoryToolScopes {
  /** Memories of this conversation only. */
  readonly conversation: MemoryScope;
  /** Memories that follow the user into other conversations (`user:<id>`, else `global`). */
  readonly lasting: MemoryScope;
}

/** How many memories `recall_memories` returns at most. */
const RECALL_LIMIT = 20;

// The tools are bound to each run's scopes, but their parameters are the same for every run:
// made once here, with the JSON Schema the model is sent (`miniParameters` says why written
// out; test/unit/tools/mini-parameters.test.ts holds it to what zod's converter makes).
const SAVE_PARAMETERS = miniParameters(
  z.object({
    key: z.string().check(z.minLength(1), z.maxLength(MAX_MEMORY_KEY_CHARS)),
    // Tighter than the API's 10 000: what the model saves is replayed into every run.
    content: z.string().check(z.minLength(1), z.maxLength(2_000)),
    importance: z.optional(z.number().check(z.gte(0), z.lte(1))),
    scope: z.optional(z.enum(['conversation', 'lasting'])),
    expiresInSeconds: z.optional(z.number().check(z.int(), z.positive())),
  }),
  {
    type: 'object',
    properties: {
      key: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_MEMORY_KEY_CHARS,
        description: 'A short label, e.g. "user.name"',
      },
      content: { type: 'string', minLength: 1, maxLength: 2_000, description: 'What to remember' },
      importance: {
        description: '0 to 1; important memories come first',
        type: 'number',
        minimum: 0,
        maximum: 1,
      },
      scope: {
        description:
          '"lasting" (default) follows the user into new conversations; "conversation" stays here',
        type: 'string',
        enum: ['conversation', 'lasting'],
      },
      expiresInSeconds: {
        description: 'Forget it after this long',
        type: 'integer',
        exclusiveMinimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
      },
    },
    required: ['key', 'content'],
  },
);
const RECALL_PARAMETERS = miniParameters(
  z.object({
    key: z.optional(z.string().check(z.maxLength(MAX_MEMORY_KEY_CHARS))),
    query: z.optional(z.string().check(z.maxLength(1_000))),
  }),
  {
    type: 'object',
    properties: {
      key: { description: 'An exact key', type: 'string', maxLength: MAX_MEMORY_KEY_CHARS },
      query: {
        description: 'Words to look for in keys and contents',
        type: 'string',
        maxLength: 1_000,
      },
    },
  },
);
const FORGET_PARAMETERS = miniParameters(
  z.object({ key: z.string().check(z.minLength(1), z.maxLength(MAX_MEMORY_KEY_CHARS)) }),
  {
    type: 'object',
    properties: { key: { type: 'string', minLength: 1, maxLength: MAX_MEMORY_KEY_CHARS } },
    required: ['key'],
  },
);

/**
 * The built-in memory tools, bound to one run's scopes. The model saves, recalls and
 * forgets long-term memories with them like any other tool.
 */
export function memoryTools(store: ConversationStore, scopes: MemoryToolScopes): Tool[] {
  const scopeOf = (which: 'conversation' | 'lasting' | undefined) =>
    which === 'conversation' ? scopes.conversation : scopes.lasting;
  return [
    builtInTool({
      name: 'save_memory',
      description:
        "Remember a fact for later (e.g. the user's name or preferences). Saving under an existing key replaces it.",
      parameters: SAVE_PARAMETERS,
      execute: async ({ key, content, importance, scope, expiresInSeconds }) => {
        const saved = await store.saveMemory({
          key,
          content,
          scope: scopeOf(scope),
          ...(importance === undefined ? {} : { importance }),
          ...(expiresInSeconds === undefined
            ? {}
            : { expiresAt: Date.now() + expiresInSeconds * 1_000 }),
        });
        return { saved: saved.key, scope: scope ?? 'lasting' };
      },
    }),
    builtInTool({
      name: 'recall_memories',
      description: 'Look up saved memories by exact key, or by words they contain.',
      parameters: RECALL_PARAMETERS,
      execute: async ({ key, query }) => {
        const memories = await store.listMemories({
          scopes: [scopes.conversation, scopes.lasting],
        });
        const words = (query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
        const matches = memories.filter((memory) => {
          if (key !== undefined) return memory.key === key;
          const text = `${memory.key} ${memory.content}`.toLowerCase();
          return words.every((word) => text.includes(word));
        });
        return matches
          .slice(0, RECALL_LIMIT)
          .map(({ key: found, content }) => ({ key: found, content }));
      },
    }),
    builtInTool({
      name: 'forget_memory',
      description: 'Forget the memory saved under a key.',
      parameters: FORGET_PARAMETERS,
      execute: async ({ key }) => {
        const memories = await store.listMemories({
          scopes: [scopes.conversation, scopes.lasting],
          includeExpired: true,
        });
        const doomed = memories.filter((memory) => memory.key === key);
        for (const memory of doomed) await store.deleteMemory(memory.id);
        return { forgotten: doomed.length };
      },
    }),
  ];
}
