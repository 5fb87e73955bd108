import { z } from 'zod/mini';
import { parseOrThrow } from '../../errors/schema-issues';
import { MAX_LEVEL_CHARS } from '../../protocol/labels';
import type { ToolSpec } from '../../protocol/tools';

/** A tool's name as the model APIs take it. */
export const toolName = z.string().check(z.regex(/^[a-zA-Z0-9_-]{1,64}$/));

const toolSpecSchema = z.object({
  name: toolName,
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  policy: z.object({
    timeoutMs: z.exactOptional(z.number().check(z.positive())),
    maxOutputChars: z.exactOptional(z.int().check(z.positive())),
    approval: z.enum(['never', 'always', 'by-arguments']),
    sink: z.exactOptional(z.enum(['always', 'by-arguments'])),
    output: z.exactOptional(
      z.object({
        confidentiality: z.exactOptional(
          z.string().check(z.regex(/\S/), z.maxLength(MAX_LEVEL_CHARS)),
        ),
        integrity: z.exactOptional(z.enum(['trusted', 'untrusted'])),
      }),
    ),
    quarantine: z.exactOptional(
      z.object({
        schema: z.record(z.string(), z.unknown()),
        instructions: z.exactOptional(z.string().check(z.maxLength(10_000))),
      }),
    ),
  }),
  callableTools: z.exactOptional(z.array(toolName).check(z.maxLength(64))),
});

/** Tool descriptions: the page's, a toolset's, or the ones a run brings. */
export const toolSpecsSchema = z.array(toolSpecSchema);

/** Checks the tools a sandbox says it serves, as they come from code the agent does not trust. */
export function parseToolSpecs(value: unknown, toolset: string): ToolSpec[] {
  return parseOrThrow(toolSpecsSchema, value, `Toolset "${toolset}" described its tools wrongly`);
}
