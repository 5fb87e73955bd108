import { z } from 'zod';
import { parseOrThrow } from '../../errors/schema-issues';
import { MAX_LEVEL_CHARS } from '../../protocol/labels';
import type { ToolSpec } from '../../protocol/tools';

/** A tool's name as the model APIs take it. */
export const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/);

const toolSpecSchema = z.object({
  name: toolName,
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  policy: z.object({
    timeoutMs: z.number().positive().exactOptional(),
    maxOutputChars: z.int().positive().exactOptional(),
    approval: z.enum(['never', 'always', 'by-arguments']),
    sink: z.enum(['always', 'by-arguments']).exactOptional(),
    output: z
      .object({
        confidentiality: z.string().regex(/\S/).max(MAX_LEVEL_CHARS).exactOptional(),
        integrity: z.enum(['trusted', 'untrusted']).exactOptional(),
      })
      .exactOptional(),
    quarantine: z
      .object({
        schema: z.record(z.string(), z.unknown()),
        instructions: z.string().max(10_000).exactOptional(),
      })
      .exactOptional(),
  }),
  callableTools: z.array(toolName).max(64).exactOptional(),
});

/** Tool descriptions: the page's, a toolset's, or the ones a run brings. */
export const toolSpecsSchema = z.array(toolSpecSchema);

/** Checks the tools a sandbox says it serves, as they come from code the agent does not trust. */
export function parseToolSpecs(value: unknown, toolset: string): ToolSpec[] {
  return parseOrThrow(toolSpecsSchema, value, `Toolset "${toolset}" described its tools wrongly`);
}
