import { z } from 'zod/mini';
import type { KnowledgeBase } from '../../knowledge/knowledge-base';
import { knowledgePassages, toSource } from '../../knowledge/knowledge-message';
import type { KnowledgeSource } from '../../protocol/knowledge';
import type { Tool } from '../../tools/define-tool';
import { miniParameters } from '../../tools/mini-parameters';
import { builtInTool } from './built-in-tool';

/** The name of the built-in knowledge tool. */
export const SEARCH_KNOWLEDGE = 'search_knowledge';

const SEARCH_PARAMETERS = miniParameters(
  z.object({ query: z.string().check(z.minLength(1), z.maxLength(1_000)) }),
  {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        minLength: 1,
        maxLength: 1_000,
        description: 'What to look for, in a few words or a question',
      },
    },
    required: ['query'],
  },
);

/**
 * The built-in `search_knowledge` tool of one run. `used` is told what each search
 * returned, so the run can report its sources.
 */
export function knowledgeTools(
  knowledge: KnowledgeBase,
  used: (query: string, sources: readonly KnowledgeSource[]) => Promise<void>,
): Tool[] {
  return [
    builtInTool({
      name: SEARCH_KNOWLEDGE,
      description:
        "Search the app's documents for passages relevant to a query. Returns the best passages, best first, with their titles; none when nothing matched.",
      parameters: SEARCH_PARAMETERS,
      execute: async ({ query }, context) => {
        const hits = await knowledge.search(query, { signal: context.signal });
        await used(query, hits.map(toSource));
        return { passages: knowledgePassages(hits) };
      },
    }),
  ];
}
