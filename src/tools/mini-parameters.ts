import type { z } from 'zod/mini';
import { useEnglishMessages } from '../errors/schema-issues';
import type { JsonSchema } from '../protocol/tools';
import type { ToolSchema } from './standard-schema';

/**
 * A `zod/mini` schema as a built-in tool's parameters, with their JSON Schema as the model is
 * sent it. A mini schema validates as a Standard Schema but has no `~standard.jsonSchema`:
 * classic zod adds it with its every method, and zod's converter alone is some 9 KB gzip of
 * the worker's start, where the built-in tools' few schemas are known as they are written.
 * Validation gets zod's English messages, which the model reads.
 */
export function miniParameters<S extends z.ZodMiniType>(
  schema: S,
  jsonSchema: JsonSchema,
): ToolSchema<z.output<S>> {
  const standard = schema['~standard'];
  return {
    '~standard': {
      version: 1,
      vendor: standard.vendor,
      validate: (value) => {
        useEnglishMessages();
        return standard.validate(value);
      },
      jsonSchema: { input: () => jsonSchema },
    },
  };
}
